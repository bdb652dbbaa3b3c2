"""The measured figures live on one page, docs/results.md; each benchmark writes
its own section there with ``--write``.

A section is delimited by two markers::

    <!-- BEGIN bench:NAME -->
    ...
    <!-- END bench:NAME -->

NAME is the script's name (``time_to_find``), or the script's name, a dot and a
suffix for a second measurement of the same script (``time_to_find.bugs``). A
script takes the option with ``add_write_option(parser, "time_to_find")`` and runs
its ``main`` through ``run(main)``: ``--write`` alone rewrites ``bench:SCRIPT``,
``--write SCRIPT.SUFFIX`` that section. The section is checked when the arguments
are parsed, before anything is measured (a missing section is one line naming it,
exit status 2); when the script ends normally, what it printed replaces the
section's content, under a line giving the command, the date and the machine.
Nothing outside the section changes.
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import os
import platform
import shlex
import sys
from pathlib import Path
from typing import Any, Callable, Optional

#: The results page.
RESULTS = Path(__file__).resolve().parent.parent / "docs" / "results.md"


class SectionError(Exception):
    """A section that cannot be written: its markers are missing, repeated or out of order."""


def markers(name: str) -> tuple[str, str]:
    """The BEGIN and END markers of section ``name``."""
    return f"<!-- BEGIN bench:{name} -->", f"<!-- END bench:{name} -->"


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path(__file__).resolve().parent.parent))
    except ValueError:
        return str(path)


def _bounds(text: str, name: str, path: Path) -> tuple[int, int]:
    """Where section ``name``'s content starts and ends in ``text``; SectionError
    (one line, naming the section) when its markers are not there exactly once,
    BEGIN before END."""
    begin, end = markers(name)
    if text.count(begin) != 1 or text.count(end) != 1 or text.index(begin) > text.index(end):
        problem = ("has no section" if begin not in text and end not in text else
                   "has a broken section (markers missing, repeated or out of order):")
        raise SectionError(f"{_shown(path)} {problem} bench:{name}; it needs exactly one "
                           f"'{begin}' followed by one '{end}'")
    return text.index(begin) + len(begin), text.index(end)


def replace_section(text: str, name: str, body: str, path: Optional[Path] = None) -> str:
    """``text`` with the content of section ``name`` replaced by ``body``; the rest unchanged.
    ``path`` (default: the results page) only names the file in an error."""
    start, stop = _bounds(text, name, path or RESULTS)
    return text[:start] + "\n" + body.strip("\n") + "\n" + text[stop:]


def check_section(name: str, path: Optional[Path] = None) -> None:
    """Raise SectionError when section ``name`` of ``path`` (default: the results
    page) cannot be written."""
    path = path or RESULTS
    try:
        text = path.read_text()
    except OSError as exc:
        raise SectionError(f"{_shown(path)}: cannot read it for section bench:{name} ({exc.strerror or exc})") from None
    _bounds(text, name, path)


def write_section(name: str, body: str, path: Optional[Path] = None) -> None:
    """Replace section ``name``'s content in ``path`` (default: the results page),
    written whole, then renamed into place."""
    path = path or RESULTS
    text = replace_section(path.read_text(), name, body, path)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_text(text)
    os.replace(tmp, path)


def machine() -> str:
    """The machine a measurement ran on, in words (no host name)."""
    return (f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores, "
            f"Python {platform.python_version()}")


def render(output: str, command: str, when: Optional[dt.date] = None, on: Optional[str] = None) -> str:
    """A section's content: the provenance line, then what the script printed, its
    Markdown tables as they are and everything else in ``text`` blocks."""
    when = when or dt.date.today()
    out = [f"Measured {when.isoformat()} with `{command}` ({on or machine()}):", ""]
    block: list[str] = []
    kind = None

    def flush() -> None:
        nonlocal block, kind
        while block and not block[-1].strip():
            block.pop()
        if block:
            out.extend(block if kind == "table" else ["```text", *block, "```"])
            out.append("")
        block, kind = [], None

    for line in output.rstrip().splitlines():
        this = "table" if line.lstrip().startswith("|") else "text"
        if not line.strip():
            if kind == "table":
                flush()
            elif kind == "text":
                block.append(line)
            continue
        if kind is not None and this != kind:
            flush()
        kind = this
        block.append(line.rstrip())
    flush()
    return "\n".join(out).rstrip() + "\n"


# ------------------------------------------------------------ the option

_requested: dict[str, Any] = {}


class _WriteAction(argparse.Action):
    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, value: Any,
                 option_string: Optional[str] = None) -> None:
        own = self.const
        if value != own and not str(value).startswith(own + "."):
            _fail(f"--write {value}: not a section of this benchmark (its sections are bench:{own} "
                  f"and bench:{own}.SUFFIX)")
        try:
            check_section(value)
        except SectionError as exc:
            _fail(str(exc))
        _requested["name"] = value
        setattr(namespace, self.dest, value)


def _fail(message: str) -> None:
    print(f"error: {message}", file=sys.stderr)
    raise SystemExit(2)


def add_write_option(parser: argparse.ArgumentParser, name: str) -> None:
    """``--write [SECTION]``: write what the script prints into docs/results.md,
    section ``bench:NAME`` (or ``bench:NAME.SUFFIX``)."""
    parser.add_argument("--write", nargs="?", const=name, default=None, metavar="SECTION", action=_WriteAction,
                        help=f"also write the output into docs/results.md, section bench:{name} (the "
                             f"default) or bench:{name}.SUFFIX; checked before anything runs")


def _command(argv: list[str], section: str) -> str:
    script = Path(argv[0])
    args: list[str] = []
    skip = False
    for i, token in enumerate(argv[1:], 1):
        if skip:
            skip = False
            continue
        if token.startswith("--write="):
            continue
        if token == "--write":
            nxt = argv[i + 1] if i + 1 < len(argv) else None
            skip = nxt == section
            continue
        args.append(token)
    shown = f"benchmarks/{script.name}" if script.suffix == ".py" else script.name
    return shlex.join(["python", shown, *args])


class _Tee(io.TextIOBase):
    """Writes to the real stream and keeps a copy."""

    def __init__(self, stream: Any) -> None:
        self.stream, self.copy = stream, io.StringIO()

    def write(self, s: str) -> int:
        self.copy.write(s)
        return self.stream.write(s)

    def flush(self) -> None:
        self.stream.flush()

    def fileno(self) -> int:
        return self.stream.fileno()

    def isatty(self) -> bool:
        return self.stream.isatty()


def run(main: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Run a benchmark's ``main``; when it asked for ``--write`` and ends normally
    (returns None or 0, or exits with status 0), write what it printed to stdout
    into its section. Returns what ``main`` returned."""
    _requested.clear()
    real, tee = sys.stdout, _Tee(sys.stdout)
    sys.stdout = tee
    ok = False
    try:
        result = main(*args, **kwargs)
        ok = result in (None, 0)
        return result
    except SystemExit as exc:
        ok = exc.code in (None, 0)
        raise
    finally:
        sys.stdout = real
        name = _requested.get("name")
        if ok and name:
            write_section(name, render(tee.copy.getvalue(), _command(sys.argv, name)))
            print(f"written: {_shown(RESULTS)}, section bench:{name}", file=sys.stderr)
