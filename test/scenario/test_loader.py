"""A scenario file is refused before anything starts, with the file, the line and the field."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from acres_bridge.scenario import ScenarioFileError, load_scenario, parse_scenario
from acres_bridge.scenario.cli import prepare
from acres_bridge.scenario.schema import DEFAULT_START_UTC

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "scenarios"
GOOD = """\
acres_scenario: 1
name: route
session:
  vehicle: polaris
  seed: 7
duration_s: 5
stack:
  builtin: autopilot
criteria:
  - {kind: max_speed, max_mps: 5}
  - {kind: max_cross_track_error, max_m: 0.3, after_s: 1}
"""


def refusal(text: str) -> str:
    with pytest.raises(ScenarioFileError) as caught:
        parse_scenario(textwrap.dedent(text), "s.yaml")
    return str(caught.value)


def test_a_good_file_gives_its_values_and_the_defaults():
    scenario = parse_scenario(GOOD, "s.yaml")
    assert scenario.session.seed == 7
    assert scenario.session.start_utc == DEFAULT_START_UTC
    assert scenario.stepping.mode == "lockstep"
    assert scenario.stepping.steps_per_request == "auto"
    assert scenario.stepping.requested_steps() == 12  # without stack rates
    assert [c.label for c in scenario.criteria] == ["max_speed", "max_cross_track_error"]


@pytest.mark.parametrize("name", sorted(p.name for p in EXAMPLES.glob("*.yaml")))
def test_every_example_is_valid(name):
    scenario, episodes = prepare(EXAMPLES / name)
    assert episodes
    assert scenario.name == name.removesuffix(".yaml")


def test_an_unknown_key_names_its_line_and_field():
    message = refusal(GOOD.replace("  seed: 7", "  seed: 7\n  sead: 8"))
    assert message == "s.yaml:6: session.sead: unknown key"


def test_a_wrong_type_names_its_line_and_field():
    message = refusal(GOOD.replace("seed: 7", "seed: seven"))
    assert message.startswith("s.yaml:5: session.seed: ")


def test_a_value_out_of_range_names_the_criterion_in_the_list():
    message = refusal(GOOD.replace("max_m: 0.3", "max_m: -1"))
    assert message.startswith("s.yaml:11: criteria[1].max_m: Input should be greater than 0")


def test_an_unknown_criterion_is_refused_with_the_known_ones():
    message = refusal(GOOD.replace("kind: max_speed", "kind: max_sped"))
    assert message.startswith("s.yaml:10: criteria[0]: unknown kind 'max_sped'; known: 'goal_reached'")


def test_a_missing_field_is_named_on_the_line_of_its_mapping():
    message = refusal(GOOD.replace("duration_s: 5\n", ""))
    assert message == "s.yaml:1: duration_s: Field required"


def test_the_format_key_comes_first():
    assert "the first key must be acres_scenario" in refusal("name: x\nacres_scenario: 1\n")
    assert "acres_scenario: Input should be 1" in refusal(
        GOOD.replace("acres_scenario: 1", "acres_scenario: 2")
    )


def test_a_key_given_twice_is_refused():
    assert refusal(GOOD + "duration_s: 6\n") == "s.yaml:12: duration_s: given twice"


def test_yaml_that_is_no_yaml_names_its_line():
    assert refusal(GOOD + "criteria: [\n").startswith("s.yaml:")


def test_the_drive_by_wire_criteria_are_the_polaris_s():
    message = refusal(
        GOOD.replace("vehicle: polaris", "vehicle: maxxum")
        .replace("builtin: autopilot", "builtin: none")
        .replace("{kind: max_speed, max_mps: 5}", "{kind: no_dbw_timeout}")
    )
    assert "the drive-by-wire is the Polaris's" in message


def test_a_flag_written_as_text_is_refused():
    assert "session.perception" in refusal(GOOD.replace("  seed: 7", "  seed: 7\n  perception: 'yes'"))


def test_a_stack_needs_exactly_one_kind():
    message = refusal(GOOD.replace("  builtin: autopilot", "  builtin: autopilot\n  run: a b"))
    assert "stack: Value error, give exactly one of launch, run, python or builtin" in message


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "s.yaml"
    path.write_text(text)
    return path


def test_a_stack_package_that_is_not_installed_is_refused_before_anything_starts(tmp_path):
    path = write(tmp_path, GOOD.replace("builtin: autopilot", "run: no_such_package follower"))
    with pytest.raises(ScenarioFileError, match=r"s\.yaml: stack\.run: no package 'no_such_package'"):
        prepare(path)


def test_a_stack_executable_that_does_not_exist_is_refused(tmp_path):
    pytest.importorskip("ros2cli", reason="the ros2 command line is not installed")
    path = write(tmp_path, GOOD.replace("builtin: autopilot", "run: acres_bridge no_such_node"))
    with pytest.raises(ScenarioFileError, match="package acres_bridge has no executable 'no_such_node'"):
        prepare(path)


def test_a_python_stack_whose_module_is_missing_is_refused(tmp_path):
    path = write(tmp_path, GOOD.replace("builtin: autopilot", "python: no_such_module:build"))
    with pytest.raises(ScenarioFileError, match=r"stack\.python: cannot import no_such_module"):
        prepare(path)


def test_a_topic_the_vehicle_does_not_have_is_refused(tmp_path):
    path = write(tmp_path, GOOD + "  - {kind: topic_rate, topic: /vehicle/nothing, min_hz: 1}\n")
    with pytest.raises(ScenarioFileError, match="topic '/vehicle/nothing' is not a topic of the polaris"):
        prepare(path)


def test_a_file_too_large_or_unreadable_is_refused(tmp_path):
    with pytest.raises(ScenarioFileError, match="cannot read it"):
        load_scenario(tmp_path / "absent.yaml")
    big = tmp_path / "big.yaml"
    big.write_bytes(b"#" * (2 << 20))
    with pytest.raises(ScenarioFileError, match="a scenario file has at most"):
        load_scenario(big)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=400))
def test_any_text_is_a_scenario_or_a_scenario_file_error(text):
    try:
        parse_scenario(text, "fuzz.yaml")
    except ScenarioFileError as error:
        message = str(error)
    else:
        return
    assert message.startswith("fuzz.yaml")


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(["seed", "core", "scene", "map", "start_utc", "agents", "x"]),
        st.from_type(object) | st.integers() | st.text(),
        max_size=3,
    )
)
def test_any_session_mapping_is_valid_or_refused_naming_the_session(session):
    text = GOOD.replace("session:\n  vehicle: polaris\n  seed: 7\n", "")
    try:
        data = yaml.safe_dump({"session": session}, default_flow_style=False)
    except yaml.YAMLError:
        return
    try:
        parse_scenario(text + data, "fuzz.yaml")
    except ScenarioFileError as error:
        message = str(error)
    else:
        return
    assert "session" in message
