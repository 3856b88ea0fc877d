"""Policies: a callable from an observation to an action, loaded by name or from a saved model.

``load_policy`` gives the policy_driver node (and the examples) one way to name a policy:

- ``module:callable``: a callable ``observation -> action`` (a function, or an object with
  ``__call__``), e.g. ``acres_bridge.gym.policy:route_follower``;
- a ``.zip`` path: a Stable-Baselines3 model (``algorithm`` names its class, PPO by default), run
  deterministically; Stable-Baselines3 is needed only then.

``route_follower`` is a hand-written follower of the route on the ``state`` observation: a
baseline to compare a learned policy against, and a known policy for the tests.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

__all__ = ["Policy", "PolicyError", "load_policy", "route_follower"]

Policy = Callable[[Mapping[str, npt.NDArray[Any]]], npt.ArrayLike]

ROUTE_FOLLOWER_SPEED_MPS: Final = 3.0
_CROSS_TRACK_GAIN: Final = 0.3  # 1/m^2: curvature per metre off the route
_HEADING_GAIN: Final = 1.0  # 1/m: curvature per radian of heading error
_MAX_CURVATURE: Final = 0.2


class PolicyError(ValueError):
    """A policy that cannot be loaded: the message names it and why."""


def route_follower(observation: Mapping[str, npt.NDArray[Any]]) -> npt.NDArray[np.float32]:
    """Hold ROUTE_FOLLOWER_SPEED_MPS and steer the route's curvature ahead, corrected by the
    cross-track and heading errors: [speed, curvature] (the Polaris's action; a Maxxum's
    hitch lever is appended when the observation has an ``implement`` part)."""
    state = observation["state"]
    curvature = float(state[4]) - _CROSS_TRACK_GAIN * float(state[0]) - _HEADING_GAIN * float(state[1])
    curvature = min(max(curvature, -_MAX_CURVATURE), _MAX_CURVATURE)
    action = [ROUTE_FOLLOWER_SPEED_MPS, curvature]
    if "implement" in observation:
        action.append(0.6)  # the lever of a working depth
    return np.array(action, dtype=np.float32)


def load_policy(name: str, *, algorithm: str = "PPO") -> Policy:
    """The policy ``name`` names (see the module); PolicyError when it cannot be loaded."""
    if name.endswith(".zip"):
        return _stable_baselines3(Path(name), algorithm)
    module_name, colon, attribute = name.partition(":")
    if not colon or not module_name or not attribute:
        raise PolicyError(f"policy {name!r}: expected module:callable or a Stable-Baselines3 .zip")
    try:
        target = importlib.import_module(module_name)
        for part in attribute.split("."):
            target = getattr(target, part)
    except (ImportError, AttributeError) as error:
        raise PolicyError(f"policy {name!r}: {error}") from None
    if not callable(target):
        raise PolicyError(f"policy {name!r} is not callable")
    policy: Policy = target
    return policy


def _stable_baselines3(path: Path, algorithm: str) -> Policy:
    if not path.is_file():
        raise PolicyError(f"policy {str(path)!r}: no such file")
    try:
        module = importlib.import_module("stable_baselines3")
    except ImportError:
        raise PolicyError(
            f"policy {str(path)!r}: a .zip needs Stable-Baselines3 (pip install acres_bridge[rl])"
        ) from None
    kind = getattr(module, algorithm, None)
    if kind is None or not hasattr(kind, "load"):
        raise PolicyError(f"policy {str(path)!r}: Stable-Baselines3 has no algorithm {algorithm!r}")
    try:
        model = kind.load(str(path), device="cpu")
    except Exception as error:  # whatever a corrupt or foreign file raises
        raise PolicyError(f"policy {str(path)!r}: not a {algorithm} model: {error}") from None

    def predict(observation: Mapping[str, npt.NDArray[Any]]) -> npt.ArrayLike:
        action, _ = model.predict(dict(observation), deterministic=True)
        return action  # type: ignore[no-any-return]

    return predict
