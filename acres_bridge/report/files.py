"""The files of a run folder as the report takes them: only regular files inside the folder, read
up to a bound, and links to them that stay inside it.

A run folder is data from elsewhere (mailed, unpacked, shared): an episode's name, a symbolic link
or a FIFO in it must not make the report read, link or wait on anything outside the folder. Each
path is resolved (every symbolic link followed) and must lie inside the folder's resolved path;
a file is stat'ed before it is opened and opened only when it is a regular file, so a FIFO, a
socket, a device or a folder in a file's place is refused rather than waited on.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path, PurePosixPath
from typing import BinaryIO, Final
from urllib.parse import quote

__all__ = ["RunFileError", "inside", "open_regular", "read_regular", "regular_or_none", "relative_href"]

_HREF_SAFE: Final = "/,=+"  # kept as they are in a link, besides letters, digits and "_.-~"


class RunFileError(ValueError):
    """A file of the run that the report does not read or link: outside the run folder, not a
    regular file, too large, or unreadable. Its message starts with the file's name."""


def inside(root: Path, relative: str) -> Path:
    """The resolved path of `relative` under `root` (itself resolved); RunFileError when it is
    absolute, climbs with '..', holds a NUL, or leads out of `root` through a symbolic link."""
    pure = PurePosixPath(relative)
    if "\x00" in relative or not relative or pure.is_absolute() or ".." in pure.parts:
        raise RunFileError(f"{relative!r}: not a path inside the run folder")
    resolved = (root / relative).resolve()
    if not resolved.is_relative_to(root):
        raise RunFileError(f"{relative}: leads out of {root} (through a symbolic link)")
    return resolved


def _kind(mode: int) -> str:
    """What a file that is not a regular one is, for a message."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def regular_or_none(path: Path, name: str) -> os.stat_result | None:
    """The status of `path` (resolved already) when it is a regular file, None when there is no
    such file; RunFileError (named `name`) for a FIFO, a socket, a device or a folder."""
    try:
        status = os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise RunFileError(f"{name}: cannot be read: {error.strerror}") from None
    if not stat.S_ISREG(status.st_mode):
        raise RunFileError(f"{name}: is {_kind(status.st_mode)}, not a regular file")
    return status


def open_regular(path: Path, name: str, limit: int) -> BinaryIO:
    """`path` (resolved already) opened for reading: only a regular file of at most `limit` bytes,
    checked before it is opened and again on what was opened. RunFileError otherwise, also when
    there is no such file."""
    status = regular_or_none(path, name)
    if status is None:
        raise RunFileError(f"{name}: no such file")
    if status.st_size > limit:
        raise RunFileError(f"{name}: {status.st_size} bytes; at most {limit} are read")
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        descriptor = os.open(path, flags)
    except OSError as error:
        raise RunFileError(f"{name}: cannot be read: {error.strerror}") from None
    opened = os.fstat(descriptor)
    if (opened.st_dev, opened.st_ino) != (status.st_dev, status.st_ino) or not stat.S_ISREG(opened.st_mode):
        os.close(descriptor)
        raise RunFileError(f"{name}: changed while it was opened")
    return os.fdopen(descriptor, "rb")


def read_regular(path: Path, name: str, limit: int) -> bytes:
    """The bytes of a regular file of at most `limit` bytes (a file that grew past it while read
    is refused too); RunFileError otherwise."""
    with open_regular(path, name, limit) as stream:
        try:
            data = stream.read(limit + 1)
        except OSError as error:
            raise RunFileError(f"{name}: cannot be read: {error.strerror}") from None
    if len(data) > limit:
        raise RunFileError(f"{name}: more than {limit} bytes; at most {limit} are read")
    return data


def relative_href(target: Path, page_folder: Path) -> str:
    """A link from a page in `page_folder` to `target` (both resolved): a relative path,
    percent-encoded (':' and '\\' too), so it never has a scheme such as ``javascript:``."""
    return quote(os.path.relpath(target, page_folder), safe=_HREF_SAFE)
