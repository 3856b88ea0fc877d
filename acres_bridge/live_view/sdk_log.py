"""The Foxglove SDK's own log, kept out of Python.

The SDK's Rust core logs through the ``log`` crate, which the Python package forwards into Python's
``logging`` (pyo3-log): every record, and every level check of an uncached logger, takes the GIL.
The server logs while it holds a viewer's lock (a full outbox, in ``send_lossy``), and a thread that
logs to a channel (``Channel.log``) holds the GIL while it waits for that lock: each waits for the
other, and the bridge froze (no step acknowledged, SIGINT unheard). With the ``log`` crate's level
at off, its macros return before any logger is called, so nothing of the SDK takes the GIL.

The price: the SDK's warnings (a viewer's full outbox, a refused handshake) are not logged. The
server's level is set to off after it starts, since starting the first server installs the
forwarding logger at Python's level; the setting holds for every server of the process after it.
"""

from __future__ import annotations

from foxglove._foxglove_py import disable_logging

__all__ = ["keep_sdk_log_out_of_python"]


def keep_sdk_log_out_of_python() -> None:
    """Stop every record of the SDK before it reaches Python (call after starting a server)."""
    disable_logging()
