"""Local files written inside a corpus or report folder without following a
symbolic link: such a folder may be shared with other local users (a corpus on
a shared mount, a report under ``/tmp``), any of whom could plant a link to a
file of ours for the next write to go through.

The folder the user names (the root) is taken as given, links and all: it is
theirs to choose. Below it nothing is followed: each folder is opened with
``O_NOFOLLOW`` relative to its parent's descriptor (no path is looked up
twice), a new file is created with ``O_CREAT | O_EXCL | O_NOFOLLOW`` (a link,
or anything else, at its name makes the create fail: nothing is written
through it), and a file rewritten in place is written whole to a new temp file,
then renamed onto its name (``os.replace`` replaces a link there, never writes
through it).
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

#: ``os.open`` flags of a new file that no link is followed to.
NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_FOLDER = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)


class LinkRefused(OSError):
    """A folder inside a corpus or report folder is a symbolic link: nothing is
    written through it. ``str()`` is one line naming it."""

    def __init__(self, path: "str | os.PathLike[str]") -> None:
        super().__init__(errno.ELOOP, f"{path} is a symbolic link: replicheck writes nothing through a link inside a "
                                      f"corpus or report folder; remove it (or name the folder it points to)")

    def __str__(self) -> str:
        return str(self.strerror)


def _open_below(parent: int, name: str, shown: Path, create: bool) -> int:
    """The descriptor of folder ``name`` in the folder ``parent`` (created if
    missing and ``create``), never through a link. LinkRefused for a link;
    OSError otherwise (FileNotFoundError, NotADirectoryError, …)."""
    if create:
        try:
            os.mkdir(name, dir_fd=parent)   # mkdir never follows a link at its name: EEXIST
        except FileExistsError:
            pass
    try:
        return os.open(name, _FOLDER | getattr(os, "O_NOFOLLOW", 0), dir_fd=parent)
    except OSError:
        try:
            linked = stat.S_ISLNK(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode)
        except OSError:
            linked = False
        if linked:
            raise LinkRefused(shown) from None
        raise


@contextmanager
def folder(root: "str | os.PathLike[str]", *names: str, create: bool = True) -> Iterator[int]:
    """A descriptor of the folder ``root/names…``, closed on exit: ``root`` as
    named (links followed; made with its parents when missing and ``create``),
    each of ``names`` below it made when missing (``create``) and opened without
    following a link. LinkRefused when one of ``names`` is a symbolic link;
    OSError when a folder cannot be made or opened (FileNotFoundError without
    ``create``, NotADirectoryError, PermissionError, …)."""
    if create:
        Path(root).mkdir(parents=True, exist_ok=True)
    fd = os.open(root, _FOLDER)
    shown = Path(root)
    try:
        for name in names:
            shown = shown / name
            below = _open_below(fd, name, shown, create)
            os.close(fd)
            fd = below
        yield fd
    finally:
        os.close(fd)


def create_new(name: str, folder_fd: int, mode: int = 0o666) -> int:
    """A descriptor (write-only) of the new file ``name`` in the folder
    ``folder_fd`` (``mode`` less the umask). FileExistsError when anything is
    at that name, a link included (nothing is written through it); OSError
    otherwise."""
    return os.open(name, NEW_FILE, mode, dir_fd=folder_fd)


def temp_name(name: str) -> str:
    """A dot-name for a temp file of ``name``, unique to this write (this
    process's pid and 64 random bits: no one can plant a file there first)."""
    return f".{name}.tmp-{os.getpid()}-{secrets.token_hex(8)}"


def replace_file(root: "str | os.PathLike[str]", name: str, data: bytes, mode: int = 0o666) -> Path:
    """Write ``data`` as the file ``root/name``, whole or not at all: to a new
    temp file in ``root`` (``temp_name``, ``create_new``), then renamed onto
    ``name`` (``os.replace``: a link at ``name`` is replaced, not followed).
    ``root`` is made when missing. Returns the path; OSError when it cannot be
    written (the temp file is removed)."""
    with folder(root) as fd:
        tmp = temp_name(name)
        out = create_new(tmp, fd, mode)
        try:
            with open(out, "wb") as fh:
                fh.write(data)
            os.replace(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
        except BaseException:
            try:
                os.unlink(tmp, dir_fd=fd)
            except OSError:
                pass
            raise
    return Path(root) / name
