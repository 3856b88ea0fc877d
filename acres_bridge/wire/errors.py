"""The exceptions of the wire protocol."""

from __future__ import annotations

from acres_bridge.errors import AcresBridgeError

__all__ = ["ProtocolError"]


class ProtocolError(AcresBridgeError):
    """Raised when a frame's payload does not decode: wrong size, bad field, unknown value.

    `version_mismatch` holds the peer's protocol version when that is the reason.
    """

    def __init__(self, message: str, *, version_mismatch: int | None = None) -> None:
        super().__init__(message)
        self.version_mismatch = version_mismatch
