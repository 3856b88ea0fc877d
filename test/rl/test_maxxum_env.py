"""The MaxxumField environment: Gymnasium's checks, the tractor driven through cmd_vel and the hitch."""

from __future__ import annotations

import numpy as np
import pytest

gym = pytest.importorskip("gymnasium")

from gymnasium.utils.env_checker import check_env  # noqa: E402

from acres_bridge.gym import MAXXUM_FIELD  # noqa: E402
from acres_bridge.gym.drive import IMPLEMENT_FIELDS  # noqa: E402

pytestmark = pytest.mark.integration


@pytest.fixture
def env():
    made = gym.make(MAXXUM_FIELD)
    yield made
    made.close()


def test_gymnasium_s_checker_passes(env):
    check_env(env.unwrapped, skip_render_check=True)


def test_the_tractor_follows_the_row_with_the_implement_lowered_and_the_pto_on(env):
    observation, info = env.reset(seed=7)
    assert set(observation) == {"state", "implement"}
    assert observation["implement"].shape == (len(IMPLEMENT_FIELDS),)
    assert info["progress_m"] == 0.0
    lift_at_start = float(observation["implement"][1])
    for _ in range(30):
        state = observation["state"]
        curvature = float(np.clip(state[4] - 0.3 * state[0] - 1.0 * state[1], -0.2, 0.2))
        observation, reward, terminated, truncated, info = env.step(
            np.array([2.0, curvature, 0.6], np.float32)
        )
        assert not terminated
        assert not truncated
        assert info["faults"] == 0
    state, implement = observation["state"], observation["implement"]
    assert 1.5 < state[2] < 2.5  # the speed asked for, through cmd_vel
    assert abs(state[0]) < 0.5  # on the row
    assert info["progress_m"] > 3.0
    assert reward > 0.0  # progress outweighs the cross-track term
    assert implement[1] < lift_at_start  # the lift arms went down with the lever
    assert implement[3] > 0.0  # the PTO turns


def test_a_bad_action_names_the_tractor_s_ranges(env):
    env.reset(seed=1)
    with pytest.raises(ValueError, match=r"hitch_lever 0\.\.1"):
        env.unwrapped.step(np.array([1.0, 0.0, 1.5], np.float32))
    with pytest.raises(ValueError, match=r"action must have shape \(3,\), found \(2,\)"):
        env.unwrapped.step(np.zeros(2, np.float32))
