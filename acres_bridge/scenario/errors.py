"""The exceptions of acres_bridge.scenario. Each says when it is raised."""

from __future__ import annotations

from acres_bridge.errors import AcresBridgeError

__all__ = ["RayOptionsError", "ScenarioError", "ScenarioFileError"]


class ScenarioError(AcresBridgeError):
    """Base of the errors of scenarios and sweeps."""


class ScenarioFileError(ScenarioError):
    """Raised before anything starts when a scenario file cannot be read or is not valid: the
    message names the file, the line and the field (one line per fault)."""


class RayOptionsError(ScenarioError):
    """Raised before any episode runs when the sweep's Ray cannot run it as asked: no Ray cluster
    answers at the address, a CPU count below what an episode needs, or an episode that needs more
    CPUs than any node has. The message names the option and its value."""
