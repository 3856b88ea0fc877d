"""The exceptions of acres_bridge.scenario. Each says when it is raised."""

from __future__ import annotations

from acres_bridge.errors import AcresBridgeError

__all__ = ["ScenarioError", "ScenarioFileError"]


class ScenarioError(AcresBridgeError):
    """Base of the errors of scenarios and sweeps."""


class ScenarioFileError(ScenarioError):
    """Raised before anything starts when a scenario file cannot be read or is not valid: the
    message names the file, the line and the field (one line per fault)."""
