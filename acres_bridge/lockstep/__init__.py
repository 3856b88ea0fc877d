"""Lockstep for a user's own node: step the simulation and receive every message of each step.

from acres_bridge.lockstep import SteppingClient
"""

from acres_bridge.errors import SteppingError
from acres_bridge.lockstep.batch import StepBatch, StepMessages
from acres_bridge.lockstep.client import SteppingClient
from acres_bridge.lockstep.stack_pace import StackPace

__all__ = ["StackPace", "StepBatch", "StepMessages", "SteppingClient", "SteppingError"]
