"""The exceptions of acres_bridge. Each says when it is raised."""

from __future__ import annotations

__all__ = ["AcresBridgeError", "ComponentError", "ProfileError"]


class AcresBridgeError(Exception):
    """Base of every error that acres_bridge raises on purpose."""


class ProfileError(AcresBridgeError):
    """Raised when a msg_profiles file is missing, malformed or contradicts itself.

    The message names the file and, where there is one, the row (1-based) and the topic.
    """

    def __init__(self, file: str, message: str, *, row: int | None = None, topic: str | None = None) -> None:
        where = file
        if row is not None:
            where += f", row {row}"
        if topic:
            where += f" ({topic})"
        super().__init__(f"{where}: {message}")
        self.file = file
        self.row = row
        self.topic = topic


class ComponentError(AcresBridgeError):
    """Raised when the component container cannot find, build or unload a node class.

    The message names the plugin (``package::ClassName``) or the unique id concerned and the reason;
    for an unknown plugin it lists what is registered.
    """
