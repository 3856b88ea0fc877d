"""The exceptions of the bag tools. Each says when it is raised; each message names the bad value
and what was expected."""

from __future__ import annotations

from acres_bridge.errors import AcresBridgeError

__all__ = ["AllowFileError", "BagError", "CdrError", "DefinitionError", "QosYamlError", "ToolError"]


class ToolError(AcresBridgeError):
    """Base of every error the bag tools raise on purpose. The command-line tools print it and exit
    with status 2."""


class BagError(ToolError):
    """Raised when a bag cannot be opened or read: a missing path, a file that is not an MCAP file, a
    directory without rosbag2 metadata, a storage format the tools do not read."""


class QosYamlError(ToolError):
    """Raised when the offered_qos_profiles text of a topic is not the YAML that rosbag2 writes."""


class DefinitionError(ToolError):
    """Raised when a message type is malformed, unknown here, or its .msg definition cannot be found or
    parsed."""


class CdrError(ToolError):
    """Raised when serialised CDR bytes are too short or malformed for the layout they should have."""


class AllowFileError(ToolError):
    """Raised when an allow file of check_topic_parity is missing or malformed; names the file and the
    entry (1-based)."""

    def __init__(self, file: str, message: str, *, entry: int | None = None) -> None:
        where = file if entry is None else f"{file}, entry {entry}"
        super().__init__(f"{where}: {message}")
        self.file = file
        self.entry = entry
