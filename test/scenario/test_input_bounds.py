"""Every value of a scenario file is bounded where it enters: beyond a bound, the file is refused
with its file, line and field, before anything starts; never a traceback, never a hang."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from acres_bridge.scenario import ScenarioFileError, expand, load_scenario, parse_scenario
from acres_bridge.scenario.loader import MAX_YAML_DEPTH, MAX_YAML_NODES
from acres_bridge.scenario.schema import MAX_SWEEP_EPISODES, MAX_SWEEP_VALUE_TEXT
from acres_bridge.scenario.stack import check_stack
from acres_bridge.scenario.sweep import MAX_FOLDER_BYTES
from acres_bridge.wire.messages import RESET_REACH_M

BASE = """\
acres_scenario: 1
name: route
session: {vehicle: polaris, seed: 1}
duration_s: 5
stack: {builtin: dbw_demo_driver, args: {speed_mps: 2.0}}
criteria: [{kind: max_speed, max_mps: 5}]
"""


def refusal(text: str) -> str:
    with pytest.raises(ScenarioFileError) as caught:
        expand(parse_scenario(text, "s.yaml"))
    return str(caught.value)


def alias_bomb(levels: int) -> str:
    """A description that nests `levels` lists of nine aliases each: 9**levels values in a few
    hundred bytes."""
    lines = ["  - &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"  - &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, levels)]
    return BASE + "description:\n" + "\n".join(lines) + "\n"


# -- the YAML text -------------------------------------------------------------------------------


@pytest.mark.timeout(120)
@pytest.mark.parametrize("levels", [7, 40])
def test_an_alias_bomb_is_refused_before_any_value_is_made(levels):
    text = alias_bomb(levels)
    assert len(text) < 14_000
    message = refusal(text)
    assert message.startswith("s.yaml:")
    assert "YAML nodes, its aliases (*name) expanded" in message
    assert f"at most {MAX_YAML_NODES:,}" in message


def test_aliases_within_the_bound_are_read_as_yaml_says():
    text = BASE.replace("speed_mps: 2.0", "speed_mps: &speed 2.0, lookahead_m: *speed")
    (episode,) = expand(parse_scenario(text, "s.yaml"))
    assert episode.scenario.stack.args == {"speed_mps": 2.0, "lookahead_m": 2.0}


@pytest.mark.parametrize("depth", [MAX_YAML_DEPTH + 1, 10_000])
def test_deep_nesting_is_refused_on_its_line(depth):
    message = refusal(BASE + "description: " + "[" * depth + "]" * depth + "\n")
    assert (
        message
        == f"s.yaml:7: nested more than {MAX_YAML_DEPTH} levels deep; a scenario file nests at most 32"
    )


def test_deep_block_nesting_is_refused_too():
    nested = "".join(f"{'  ' * level}k{level}:\n" for level in range(MAX_YAML_DEPTH + 5))
    assert "nested more than 32 levels deep" in refusal(BASE + "extra:\n" + textwrap.indent(nested, "  "))


def test_nesting_within_the_bound_reaches_the_schema():
    depth = MAX_YAML_DEPTH - 2
    message = refusal(BASE + "description: " + "[" * depth + "]" * depth + "\n")
    assert message.startswith("s.yaml:7: description: Input should be a valid string")


def test_nesting_made_deep_by_aliases_is_refused():
    chain = ["  - &n0 " + "[" * 20 + "]" * 20]
    chain += [f"  - &n{i} " + "[" * 20 + f"*n{i - 1}" + "]" * 20 for i in range(1, 4)]
    message = refusal(BASE + "description:\n" + "\n".join(chain) + "\n")
    assert "levels deep with its aliases (*name) expanded; a scenario file nests at most 32" in message


def test_an_alias_inside_its_own_anchor_is_refused():
    assert "s.yaml:7: an alias (*name) inside the node it names" in refusal(BASE + "description: &a [*a]\n")


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("1" * 5000, "Exceeds the limit (4300 digits)"),
        ("0000-01-01T00:00:00Z", "year 0 is out of range"),
    ],
    ids=["an integer of 5000 digits", "a date of year 0"],
)
def test_a_value_yaml_cannot_make_is_refused_on_its_line(value, why):
    message = refusal(BASE.replace("speed_mps: 2.0", f"speed_mps: {value}"))
    assert message.startswith("s.yaml:5: not valid YAML: cannot read the value ")
    assert why in message


# -- the sweep -----------------------------------------------------------------------------------


@pytest.mark.timeout(120)
def test_a_sweep_of_a_billion_episodes_is_counted_not_expanded():
    axis = "[" + ", ".join(str(i) for i in range(1000)) + "]"
    text = BASE + f"sweep:\n  matrix:\n    seed: {axis}\n    args: {{a: {axis}, b: {axis}}}\n"
    message = refusal(text)
    assert message.startswith("s.yaml:7: sweep: ")
    assert "1000000000 episodes (matrix 1000 x 1000 x 1000, list 0)" in message
    assert f"a sweep has at most {MAX_SWEEP_EPISODES}" in message


def test_a_sweep_at_the_bound_is_expanded():
    text = BASE + "sweep:\n  matrix:\n    seed: [1, 2]\n  list: [{seed: 3}]\n"
    assert len(expand(parse_scenario(text))) == 3


def test_a_nul_in_a_stack_argument_is_refused_naming_it():
    message = refusal(BASE.replace("speed_mps: 2.0", 'speed_mps: 2.0, frame: "map\\0odom"'))
    assert message.startswith(
        "s.yaml:5: stack.args.frame: Value error, a text must not hold control characters"
    )


@pytest.mark.parametrize(
    "stack",
    [
        '{launch: "my_pkg a\\0b.launch.py"}',
        '{run: "my_pkg fol\\x01lower"}',
        '{run: "my_pkg ' + "x" * 300 + '"}',
    ],
    ids=["a NUL", "a control character", "a word of 300 characters"],
)
def test_a_command_with_a_control_character_or_a_long_word_is_refused(stack):
    text = BASE.replace("stack: {builtin: dbw_demo_driver, args: {speed_mps: 2.0}}", f"stack: {stack}")
    assert refusal(text).startswith("s.yaml:5: stack.")


def test_a_long_sweep_value_is_refused_on_its_line():
    long = "x" * 300
    message = refusal(BASE + f"sweep:\n  list:\n    - {{args: {{speed_mps: {long}}}}}\n")
    assert message == (
        "s.yaml:9: sweep.list[0].args.speed_mps: Value error, "
        f"a text of 300 characters; at most {MAX_SWEEP_VALUE_TEXT}"
    )


def test_a_long_matrix_value_is_refused_on_its_line():
    long = "y" * (MAX_SWEEP_VALUE_TEXT + 1)
    message = refusal(BASE + f"sweep:\n  matrix:\n    args:\n      speed_mps: [1, {long}]\n")
    assert message.startswith(
        "s.yaml:10: sweep.matrix.args.speed_mps[1]: Value error, a text of 65 characters"
    )


def test_a_long_argument_name_is_refused():
    message = refusal(BASE.replace("speed_mps: 2.0", f"{'n' * 65}: 1"))
    assert message.startswith("s.yaml:5: stack.args: Value error, argument name 'nnn")


def test_an_episode_folder_name_longer_than_a_file_system_takes_is_refused():
    args = "\n".join(f"      arg{i}: [{'v' * 60}]" for i in range(5))
    message = refusal(BASE + f"sweep:\n  matrix:\n    args:\n{args}\n")
    assert message.startswith("sweep: episode route/arg0=")
    assert f"bytes; at most {MAX_FOLDER_BYTES}" in message


def test_episode_folders_stay_within_the_bound():
    args = "\n".join(f"      arg{i}: [{'v' * 40}]" for i in range(5))
    (episode,) = expand(parse_scenario(BASE + f"sweep:\n  matrix:\n    args:\n{args}\n"))
    assert len(episode.folder.partition("/")[2].encode()) <= MAX_FOLDER_BYTES


def test_two_episodes_in_one_folder_are_refused():
    message = refusal(BASE + "sweep:\n  matrix:\n    args: {frame: [a b, a-b]}\n")
    assert message == (
        "sweep: episodes route/frame=a b and route/frame=a-b would share the folder route/frame=a-b "
        "(values that differ only in characters a folder's name cannot hold)"
    )


def test_prepare_names_the_file_of_a_sweep_refused_as_a_whole(tmp_path):
    from acres_bridge.scenario.cli import prepare  # noqa: PLC0415 (the episode runner's imports)

    path = tmp_path / "s.yaml"
    path.write_text(BASE + "sweep:\n  list: [{seed: 2}, {seed: 2}]\n")
    with pytest.raises(ScenarioFileError, match=r"s\.yaml: sweep: episodes named alike: route/seed=2"):
        prepare(path)


# -- poses, times and numbers --------------------------------------------------------------------


@pytest.mark.parametrize("x", ["1e7", "1e300", str(RESET_REACH_M + 1), str(-RESET_REACH_M - 1)])
def test_a_start_off_the_map_is_refused(x):
    message = refusal(BASE.replace("seed: 1}", f"seed: 1, start: {{x: {x}, y: 0}}}}"))
    assert message.startswith("s.yaml:3: session.start: Value error, the start (")
    assert f"lies within {RESET_REACH_M:g} m of the tile's centre" in message


def test_a_utm_start_is_measured_from_the_tile_s_centre():
    inside = BASE.replace("seed: 1}", "seed: 1, start: {x: 500450, y: 4479850, frame: utm}}")
    assert parse_scenario(inside).session.start is not None
    message = refusal(BASE.replace("seed: 1}", "seed: 1, start: {x: 10, y: 20, frame: utm}}"))
    assert "utm, -500390 m east and -4479880 m north of the tile's centre, lies off the map" in message


def test_a_sweep_start_off_the_map_is_refused_on_its_line():
    message = refusal(BASE + "sweep:\n  matrix:\n    start: [{x: 0, y: 0}, {x: 0, y: 5e5}]\n")
    assert message.startswith(
        "s.yaml:9: sweep.matrix.start[1]: Value error, the start (0, 500000) lies off the map"
    )


@pytest.mark.parametrize("yaw", ["1e300", ".nan", "361"])
def test_a_yaw_beyond_a_turn_or_not_a_number_is_refused(yaw):
    message = refusal(BASE.replace("seed: 1}", f"seed: 1, start: {{x: 0, y: 0, yaw_deg: {yaw}}}}}"))
    assert message.startswith("s.yaml:3: session.start.yaw_deg: ")


@pytest.mark.parametrize("moment", ["9999-01-01T00:00:00Z", "1969-12-31T23:59:59Z", "2100-01-01T00:00:00Z"])
def test_a_start_time_beyond_the_sun_s_years_is_refused(moment):
    message = refusal(BASE.replace("seed: 1}", f"seed: 1, start_utc: {moment}}}"))
    assert message.startswith(
        "s.yaml:3: session.start_utc: Value error, must lie from 1970-01-01 up to 2100-01-01"
    )


def test_sweep_start_times_are_bounded_and_carry_their_zone():
    message = refusal(BASE + "sweep:\n  list:\n    - {start_utc: 9999-06-21T05:30:00Z}\n")
    assert message.startswith("s.yaml:9: sweep.list[0].start_utc: Value error, must lie from 1970-01-01")
    message = refusal(BASE + "sweep:\n  matrix:\n    start_utc: [2026-06-21T05:30:00]\n")
    assert message.startswith("s.yaml:9: sweep.matrix.start_utc[0]: Value error, must carry its time zone")


@pytest.mark.parametrize(
    ("criterion", "field"),
    [
        ("{kind: goal_reached, x: .nan, y: 0, within_s: 3}", "criteria[1].x"),
        ("{kind: goal_reached, x: 0, y: .inf, within_s: 3}", "criteria[1].y"),
        ("{kind: max_cross_track_error, max_m: .nan}", "criteria[1].max_m"),
        ("{kind: min_distance, min_m: .inf}", "criteria[1].min_m"),
    ],
)
def test_a_criterion_s_number_that_is_not_finite_is_refused(criterion, field):
    message = refusal(BASE.replace("max_mps: 5}", f"max_mps: 5}}, {criterion}"))
    assert message.startswith(f"s.yaml:6: {field}: Input should be a finite number")


def test_a_goal_off_the_map_is_refused():
    message = refusal(
        BASE.replace("max_mps: 5}", "max_mps: 5}, {kind: goal_reached, x: 2e3, y: 0, within_s: 3}")
    )
    assert message.startswith("s.yaml:6: criteria[1]: Value error, the goal (2000, 0) lies off the map")


def test_an_implement_bound_that_is_not_finite_is_refused():
    text = (
        BASE.replace("vehicle: polaris", "vehicle: maxxum")
        .replace("{builtin: dbw_demo_driver, args: {speed_mps: 2.0}}", "{builtin: none}")
        .replace("max_mps: 5}", "max_mps: 5}, {kind: implement_state, key: implement_depth_m, min: .nan}")
    )
    assert refusal(text).startswith("s.yaml:6: criteria[1].min: Input should be a finite number")


@pytest.mark.parametrize(
    ("value", "why"),
    [(".nan", "must be a finite number"), (str(1 << 63), "an integer must fit 64 bits")],
)
def test_a_stack_argument_beyond_what_ros_takes_is_refused(value, why):
    message = refusal(BASE.replace("speed_mps: 2.0", f"speed_mps: {value}"))
    assert message.startswith(f"s.yaml:5: stack.args.speed_mps: Value error, {why}")


def test_a_long_description_is_refused():
    assert refusal(BASE + f"description: {'d' * 5000}\n").startswith(
        "s.yaml:7: description: String should have at most"
    )


# -- the stack's check ---------------------------------------------------------------------------


def test_a_python_path_folder_too_long_for_the_file_system_is_no_folder(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(
        BASE.replace(
            "{builtin: dbw_demo_driver, args: {speed_mps: 2.0}}",
            f"{{python: 'my_stack:build', python_path: [{'p' * 300}]}}",
        )
    )
    scenario = load_scenario(path)
    with pytest.raises(ScenarioFileError, match=r"s\.yaml: stack\.python_path: no folder .*ppp"):
        check_stack(scenario.stack, tmp_path, str(path))


def test_a_python_stack_whose_module_fails_to_import_is_refused_naming_the_error(tmp_path):
    (tmp_path / "broken_stack.py").write_text("raise RuntimeError('no parameters file')\n")
    path = tmp_path / "s.yaml"
    path.write_text(
        BASE.replace(
            "{builtin: dbw_demo_driver, args: {speed_mps: 2.0}}",
            "{python: 'broken_stack:build', python_path: [.]}",
        )
    )
    scenario = load_scenario(path)
    with pytest.raises(
        ScenarioFileError,
        match=r"stack\.python: cannot import broken_stack: RuntimeError: no parameters file",
    ):
        check_stack(scenario.stack, tmp_path, str(path))


def test_a_nul_in_a_python_path_is_refused_by_the_schema():
    text = BASE.replace(
        "{builtin: dbw_demo_driver, args: {speed_mps: 2.0}}",
        "{python: 'my_stack:build', python_path: [\"a\\0b\"]}",
    )
    assert refusal(text).startswith("s.yaml:5: stack.python_path[0]: String should match pattern")


def test_the_examples_stay_within_every_bound():
    examples = Path(__file__).resolve().parents[2] / "examples"
    for path in [*examples.glob("scenarios/*.yaml"), *examples.glob("rl/*.yaml")]:
        assert expand(load_scenario(path))
