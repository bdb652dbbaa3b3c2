"""The Jinja2 environment the project's HTML pages are rendered with: the
report (``spark_reports.report_html``) and the campaign's live view
(``replicheck_cli.live_page``), each from its package's ``templates/`` folder
(package data).

Every ``{{ value }}`` is HTML-escaped with ``html.escape`` (quotes included,
so it is safe in attributes too) unless it is already HTML (``Markup``: a
macro's output, a ``safe`` value); an undefined name is an error, not an empty
string.
"""

from __future__ import annotations

import html
from typing import Any

import jinja2
from markupsafe import Markup


def escaped(value: Any) -> Markup:
    """``value`` as HTML: as it is when it already is (``Markup``), else its text
    escaped by ``html.escape``. Jinja's own escaping writes quotes as ``&#34;``
    and ``&#39;``; the pages have always had ``&quot;`` and ``&#x27;``."""
    if isinstance(value, Markup):
        return value
    return Markup(html.escape(str(value), quote=True))


def environment(package: str) -> jinja2.Environment:
    """A new environment over ``package``'s ``templates/`` folder (its caller
    adds its own filters). Block tags on a line of their own leave no blank line."""
    return jinja2.Environment(loader=jinja2.PackageLoader(package, "templates"), autoescape=True,
                              finalize=escaped, undefined=jinja2.StrictUndefined, trim_blocks=True,
                              lstrip_blocks=True)
