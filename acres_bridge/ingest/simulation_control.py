"""Simulation control from ROS with the standard simulation_interfaces, served at the root.

/step_simulation, /simulate_steps (action), /reset_simulation, /get_simulation_state,
/set_simulation_state, /get_simulator_features. docs/simulation_control.md says how the spec's
episode state and lockstep flag map onto SimulationState. Steps are acknowledged: a call
returns only when the simulator has run the steps and the bridge has published their data.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

from rclpy.action.server import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from simulation_interfaces.action import SimulateSteps
from simulation_interfaces.msg import Result, SimulationState, SimulatorFeatures
from simulation_interfaces.srv import (
    GetSimulationState,
    GetSimulatorFeatures,
    ResetSimulation,
    SetSimulationState,
    StepSimulation,
)

from acres_bridge.ingest.steps import StepOutcome
from acres_bridge.pace import describe_pace
from acres_bridge.pending_commands import take_pending_commands
from acres_bridge.shutdown import shutdown_requested
from acres_bridge.wire import EpisodeInfo, SimState
from acres_bridge.wire.clock import MAX_STEPS_PER_REQUEST

__all__ = ["FEATURES", "SimulationControl", "SimulatorCommands"]

FEATURES = (
    SimulatorFeatures.SIMULATION_RESET,
    SimulatorFeatures.SIMULATION_RESET_STATE,
    SimulatorFeatures.SIMULATION_RESET_SPAWNED,
    SimulatorFeatures.SIMULATION_STATE_GETTING,
    SimulatorFeatures.SIMULATION_STATE_SETTING,
    SimulatorFeatures.SIMULATION_STATE_PAUSE,
    SimulatorFeatures.STEP_SIMULATION_SINGLE,
    SimulatorFeatures.STEP_SIMULATION_MULTIPLE,
    SimulatorFeatures.STEP_SIMULATION_ACTION,
)


# The episode's states and the simulation_interfaces states they are, both ways.
_SIMULATION_STATE: dict[SimState, int] = {
    SimState.STOPPED: SimulationState.STATE_STOPPED,
    SimState.PLAYING: SimulationState.STATE_PLAYING,
    SimState.PAUSED: SimulationState.STATE_PAUSED,
}
_WIRE_STATE: dict[int, SimState] = {number: state for state, number in _SIMULATION_STATE.items()}


class SimulatorCommands(Protocol):
    """What simulation control needs from the simulator connection."""

    def request_steps(self, steps: int, *, timeout_s: float) -> StepOutcome: ...
    def set_state(self, state: SimState) -> bool: ...
    def reset_session(self, reason: str = "") -> bool: ...


def _result(code: int, message: str = "") -> Result:
    return Result(result=code, error_message=message)


class SimulationControl:
    """The services and the action, on a node, in front of a simulator connection."""

    def __init__(
        self,
        node: Node,
        commands: SimulatorCommands,
        episode: Callable[[], EpisodeInfo | None],
        *,
        step_timeout_s: float,
        state_timeout_s: float = 5.0,
        pace: Callable[[], float | None] = lambda: None,
    ) -> None:
        """`pace` gives the session's real-time factor as the bridge measures it (or None), for
        /get_simulator_features."""
        self._node = node
        self._commands = commands
        self._episode = episode
        self._step_timeout_s = step_timeout_s
        self._state_timeout_s = state_timeout_s
        self._pace = pace
        self._step_lock = threading.Lock()  # one step request at a time, in arrival order
        self._episode_changed = threading.Condition()
        group = ReentrantCallbackGroup()
        self._services = [
            node.create_service(StepSimulation, "/step_simulation", self._step, callback_group=group),
            node.create_service(ResetSimulation, "/reset_simulation", self._reset, callback_group=group),
            node.create_service(
                GetSimulationState, "/get_simulation_state", self._get_state, callback_group=group
            ),
            node.create_service(
                SetSimulationState, "/set_simulation_state", self._set_state, callback_group=group
            ),
            node.create_service(
                GetSimulatorFeatures, "/get_simulator_features", self._features, callback_group=group
            ),
        ]
        self._action = ActionServer(
            node,
            SimulateSteps,
            "/simulate_steps",
            execute_callback=self._simulate_steps,
            goal_callback=lambda _goal: GoalResponse.ACCEPT,
            cancel_callback=lambda _goal: CancelResponse.ACCEPT,
            callback_group=group,
        )

    def destroy(self) -> None:
        for service in self._services:
            self._node.destroy_service(service)
        self._action.destroy()

    def episode_changed(self) -> None:
        """Called by the owner whenever a new episode message arrived."""
        with self._episode_changed:
            self._episode_changed.notify_all()

    # ---- state -------------------------------------------------------------------------------

    def current_state(self) -> int:
        """The SimulationState of the session: the spec's episode state, or NO_WORLD unconnected."""
        info = self._episode()
        if info is None:
            return int(SimulationState.STATE_NO_WORLD)
        return _SIMULATION_STATE[info.state]

    def _not_paused(self) -> str | None:
        state = self.current_state()
        if state == SimulationState.STATE_PAUSED:
            return None
        names = {0: "stopped", 1: "playing", 4: "not connected to a simulator"}
        return f"steps run only while the simulation is paused; it is {names.get(state, state)}"

    def _get_state(self, _request: Any, response: Any) -> Any:
        response.state.state = self.current_state()
        response.result = _result(Result.RESULT_OK)
        return response

    def _features(self, _request: Any, response: Any) -> Any:
        response.features.features = list(FEATURES)
        response.features.custom_info = (
            "ACRES simulator bridge: one step is one 1/120 s physics step; steps are acknowledged "
            "after their data is published; reset keeps simulation time monotonic (no SCOPE_TIME); "
            f"{describe_pace(self._pace())}."
        )
        return response

    def _wait_for_state(self, target: int) -> bool:
        deadline = time.monotonic() + self._state_timeout_s
        with self._episode_changed:
            while self.current_state() != target:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._episode_changed.wait(remaining)
        return True

    def _set_state(self, request: Any, response: Any) -> Any:
        target = request.state.state
        current = self.current_state()
        info = self._episode()
        if target == SimulationState.STATE_QUITTING:
            response.result = _result(
                Result.RESULT_FEATURE_UNSUPPORTED, "the bridge does not end the simulator"
            )
        elif target not in (
            SimulationState.STATE_STOPPED,
            SimulationState.STATE_PLAYING,
            SimulationState.STATE_PAUSED,
        ):
            response.result = _result(
                SetSimulationState.Response.INCORRECT_TRANSITION, f"unknown state {target}"
            )
        elif info is None:
            response.result = _result(Result.RESULT_INCORRECT_STATE, "not connected to a simulator")
        elif target == current:
            response.result = _result(SetSimulationState.Response.ALREADY_IN_TARGET_STATE)
        elif target == SimulationState.STATE_PLAYING and info.lockstep:
            response.result = _result(
                SetSimulationState.Response.INCORRECT_TRANSITION,
                "this is a lockstep session: it advances only with /step_simulation or /simulate_steps",
            )
        elif not self._commands.set_state(_WIRE_STATE[target]):
            response.result = _result(
                SetSimulationState.Response.STATE_TRANSITION_ERROR, "simulator unreachable"
            )
        elif not self._wait_for_state(target):
            response.result = _result(
                SetSimulationState.Response.STATE_TRANSITION_ERROR,
                f"the simulator did not reach state {target} within {self._state_timeout_s} s",
            )
        else:
            response.result = _result(Result.RESULT_OK)
        return response

    def _reset(self, request: Any, response: Any) -> Any:
        scope = request.scope
        if scope not in (ResetSimulation.Request.SCOPE_DEFAULT, ResetSimulation.Request.SCOPE_ALL) and (
            scope & ResetSimulation.Request.SCOPE_TIME
        ):
            response.result = _result(
                Result.RESULT_FEATURE_UNSUPPORTED,
                "simulation time stays monotonic: reset the state (SCOPE_STATE) or all (SCOPE_ALL)",
            )
            return response
        info = self._episode()
        if info is None:
            response.result = _result(Result.RESULT_INCORRECT_STATE, "not connected to a simulator")
            return response
        before = info.episode
        if not self._commands.reset_session("reset_simulation"):
            response.result = _result(Result.RESULT_OPERATION_FAILED, "simulator unreachable")
            return response
        deadline = time.monotonic() + self._state_timeout_s
        with self._episode_changed:
            while (now := self._episode()) is None or now.episode == before:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    response.result = _result(
                        Result.RESULT_OPERATION_FAILED, "no new episode from the simulator"
                    )
                    return response
                self._episode_changed.wait(remaining)
        response.result = _result(Result.RESULT_OK)
        return response

    # ---- steps -------------------------------------------------------------------------------

    def _run_steps(self, steps: int) -> StepOutcome:
        if steps < 1:
            return StepOutcome(False, message="steps must be at least 1")
        if steps > MAX_STEPS_PER_REQUEST:
            return StepOutcome(
                False,
                message=f"steps must be at most {MAX_STEPS_PER_REQUEST} (5 simulated minutes) per call, "
                f"found {steps}; /simulate_steps takes any number and can be canceled",
            )
        refusal = self._not_paused()
        if refusal is not None:
            return StepOutcome(False, message=refusal)
        with self._step_lock:
            if shutdown_requested():
                return StepOutcome(False, message="the bridge is shutting down")
            take_pending_commands()  # a command sent before the request applies from its first step
            return self._commands.request_steps(steps, timeout_s=self._step_timeout_s)

    def _step(self, request: Any, response: Any) -> Any:
        outcome = self._run_steps(int(request.steps))
        response.result = _result(
            Result.RESULT_OK if outcome.ok else Result.RESULT_OPERATION_FAILED, outcome.message
        )
        return response

    def _simulate_steps(self, goal_handle: Any) -> Any:
        total = int(goal_handle.request.steps)
        result = SimulateSteps.Result()
        feedback = SimulateSteps.Feedback()
        done = 0
        while done < total:
            if goal_handle.is_cancel_requested:
                goal_handle.canceled()
                result.result = _result(Result.RESULT_OK, f"canceled after {done} of {total} steps")
                return result
            outcome = self._run_steps(1)
            if not outcome.ok:
                goal_handle.abort()
                result.result = _result(Result.RESULT_OPERATION_FAILED, outcome.message)
                return result
            done += 1
            feedback.completed_steps = done
            feedback.remaining_steps = total - done
            goal_handle.publish_feedback(feedback)
        if total == 0:
            goal_handle.abort()
            result.result = _result(Result.RESULT_OPERATION_FAILED, "steps must be at least 1")
            return result
        goal_handle.succeed()
        result.result = _result(Result.RESULT_OK)
        return result
