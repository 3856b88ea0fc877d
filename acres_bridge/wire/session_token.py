"""The session's token: only the session's own bridge may talk to the session's simulator.

A session (acres_bridge.session) makes a random token, writes it to a file only its user can read,
and gives the file's path to the simulator (``acres_sim --session-token-file``) and to the bridge
(parameter ``session_token_file``). Each reads it once as it starts: the simulator first, then the
bridge, which removes the file (take_token); the session waits for that before it starts the
stack, so no process but those two ever reads it. The bridge says the token in every
CLIENT_HELLO; the simulator refuses every connection that does not (ERROR "token"), logs the
refusal with REFUSED_LOG and counts it, and the session makes the episode an ERROR. A simulator
started without a token file takes any client, as before (a simulator of one's own, by hand).
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import stat
from pathlib import Path
from typing import Final

from acres_bridge.wire.errors import ProtocolError

__all__ = [
    "MAX_TOKEN_CHARS",
    "REFUSED_LOG",
    "TOKEN_ERROR_CODE",
    "new_token",
    "read_token",
    "take_token",
    "write_token",
]

MAX_TOKEN_CHARS: Final = 128
TOKEN_ERROR_CODE: Final = "token"
REFUSED_LOG: Final = "refused a client without the session's token"  # the simulator's log says it so
_TOKEN: Final = re.compile(r"^[0-9a-f]{32,128}$")


def new_token() -> str:
    """A fresh token: 256 random bits as hex."""
    return secrets.token_hex(32)


def write_token(path: Path, token: str) -> None:
    """Write `token` to a new file only this user can read (never over an existing one)."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w", encoding="ascii") as file:
        file.write(token + "\n")


def read_token(path: Path | str) -> str:
    """The token in a token file: a regular file of 32 to 128 lowercase hex digits and a newline.
    ProtocolError naming the file otherwise."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as error:
        raise ProtocolError(f"session token file {path}: cannot open it: {error.strerror}") from None
    with os.fdopen(descriptor, "rb") as file:
        if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
            raise ProtocolError(f"session token file {path}: not a regular file")
        text = file.read(MAX_TOKEN_CHARS + 2).decode("ascii", errors="replace").strip()
    if not _TOKEN.match(text):
        raise ProtocolError(
            f"session token file {path}: expected 32 to {MAX_TOKEN_CHARS} lowercase hex digits"
        )
    return text


def take_token(path: Path | str) -> str:
    """The token of a token file, which is removed once read: a token is said to one bridge."""
    token = read_token(path)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    return token
