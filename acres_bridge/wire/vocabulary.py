"""The protocol's shared vocabulary: the closed sets of names and numbers both sides use.

The wire dataclasses carry these as their field types, the decoders turn JSON text and numbers
into them, and the simulator and the bridge compare against them; none of them is spelled again
as a string or an int anywhere else.
"""

from __future__ import annotations

from enum import IntEnum, StrEnum

__all__ = ["ClientRole", "SensorKind", "SimState", "Source", "StepStatus", "Vehicle"]


class Vehicle(StrEnum):
    """The vehicle of an agent."""

    POLARIS = "polaris"
    MAXXUM = "maxxum"


class Source(StrEnum):
    """Which simulator a session runs in, as the Episode message names it."""

    UNREAL = "unreal"
    CORE = "core"


class SimState(IntEnum):
    """The simulation state, with the numbers of the spec's Episode message."""

    STOPPED = 0
    PLAYING = 1
    PAUSED = 2


class StepStatus(IntEnum):
    """How the simulator answered a step request."""

    DONE = 0  # the steps ran; every stream carries a mark at last_step after their data
    NOT_PAUSED = 1  # refused: steps run only while the simulation is paused
    STOPPED = 2  # refused: the simulation is stopped
    TOO_MANY_STEPS = 3  # refused: more steps than wire.clock.MAX_STEPS_PER_REQUEST


class ClientRole(StrEnum):
    """What a channel of a bridge is for."""

    CONTROL = "control"
    SENSOR = "sensor"
    VEHICLE = "vehicle"


class SensorKind(StrEnum):
    """What an entry of a sensor rig is."""

    INS = "ins"
    LIDAR = "lidar"
    CAMERA = "camera"
    FRAME = "frame"  # a frame of the rig that is no sensor
