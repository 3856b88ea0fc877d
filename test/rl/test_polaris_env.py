"""The PolarisRoute environment, by Gymnasium's own checks and by what a learner relies on."""

from __future__ import annotations

import numpy as np
import pytest

gym = pytest.importorskip("gymnasium")

from gymnasium.utils.env_checker import check_env  # noqa: E402

from acres_bridge.gym import POLARIS_ROUTE, PolarisRouteEnv  # noqa: E402

pytestmark = pytest.mark.integration

ACTIONS = [np.array([2.0 + 0.05 * i, 0.02 * np.sin(i / 5)], dtype=np.float32) for i in range(30)]


@pytest.fixture
def env():
    made = gym.make(POLARIS_ROUTE)
    yield made
    made.close()


def test_gymnasium_s_checker_passes(env):
    check_env(env.unwrapped, skip_render_check=True)


def test_the_same_seed_and_actions_give_the_same_observations_byte_for_byte(env):
    runs = []
    for _ in range(2):
        observation, _ = env.reset(seed=11)
        seen = [observation["state"].tobytes()]
        rewards = []
        for action in ACTIONS:
            observation, reward, terminated, truncated, _ = env.step(action)
            assert not terminated
            assert not truncated
            seen.append(observation["state"].tobytes())
            rewards.append(reward)
        runs.append((seen, rewards))
    assert runs[0] == runs[1]
    final = np.frombuffer(runs[0][0][-1], dtype=np.float32)
    assert final[2] > 1.0  # it drove: the speed the actions asked for
    assert abs(final[0]) < 0.5  # still on the route's first straight


def test_reset_without_a_seed_is_a_new_episode_of_the_same_session(env):
    env.reset(seed=4)
    domain = env.unwrapped.domain_id
    for action in ACTIONS[:10]:
        env.step(action)
    observation, info = env.reset()
    assert env.unwrapped.domain_id == domain
    assert info["progress_m"] == 0.0
    assert abs(float(observation["state"][2])) < 0.1  # back at rest at the start


@pytest.mark.parametrize(
    ("action", "message"),
    [
        (np.zeros(3, np.float32), r"action must have shape \(2,\), found \(3,\)"),
        (np.array([np.nan, 0.0], np.float32), "action must be finite"),
        (np.array([1.0, 0.5], np.float32), "outside the space: speed_mps 0..5, curvature_1pm -0.2..0.2"),
        (np.array([-1.0, 0.0], np.float32), "outside the space"),
    ],
)
def test_a_bad_action_is_a_clear_error_and_changes_nothing(env, action, message):
    env.reset(seed=2)
    with pytest.raises(ValueError, match=message):
        env.unwrapped.step(action)
    *_, info = env.step(np.array([0.0, 0.0], np.float32))
    assert info["sim_time_s"] == pytest.approx(0.1)  # the bad action ran no step


def test_an_unknown_observation_or_period_is_refused():
    with pytest.raises(ValueError, match="observations of a polaris must be some of"):
        PolarisRouteEnv(observations=("radar",))
    with pytest.raises(ValueError, match="control_period_s must be a whole number of 1/120 s"):
        PolarisRouteEnv(control_period_s=0.0123)


def test_a_vector_of_two_runs_each_environment_in_a_session_of_its_own():
    envs = gym.make_vec(
        POLARIS_ROUTE, num_envs=2, vectorization_mode="async", vector_kwargs={"context": "spawn"}
    )
    try:
        observations, _ = envs.reset(seed=[5, 6])
        assert observations["state"].shape == (2, 5)
        actions = np.array([[2.0, 0.0], [1.0, 0.01]], dtype=np.float32)
        for _ in range(10):
            observations, rewards, terminated, truncated, infos = envs.step(actions)
        assert not truncated.any()
        assert rewards.shape == (2,)
        assert not terminated.any()
        assert observations["state"][0, 2] > observations["state"][1, 2]  # each drove its own action
        assert infos["sim_time_s"].tolist() == pytest.approx([1.0, 1.0])
    finally:
        envs.close()


def test_a_scenario_file_gives_the_start_pose_the_time_and_the_seed(tmp_path):
    route = PolarisRouteEnv().observer.route
    x, y, yaw = route.pose_at(0.0)
    left = (x - np.sin(yaw), y + np.cos(yaw))  # 1 m left of the route's start
    scenario = tmp_path / "starts.yaml"
    scenario.write_text(
        "acres_scenario: 1\nname: starts\nsession:\n  vehicle: polaris\n"
        f"  start: {{x: {float(left[0])!r}, y: {float(left[1])!r}, yaw_deg: {float(np.degrees(yaw))!r}}}\n"
        "duration_s: 10\nstack: {builtin: none}\ncriteria: [{kind: max_speed, max_mps: 10}]\n"
    )
    env = PolarisRouteEnv(scenario=scenario)
    try:
        observation, _ = env.reset(seed=3)
        assert observation["state"][0] == pytest.approx(1.0, abs=0.1)  # started where the file says
    finally:
        env.close()
    maxxum = tmp_path / "maxxum.yaml"
    maxxum.write_text(scenario.read_text().replace("vehicle: polaris", "vehicle: maxxum"))
    with pytest.raises(ValueError, match="a scenario of a maxxum, not of a polaris"):
        PolarisRouteEnv(scenario=maxxum)
