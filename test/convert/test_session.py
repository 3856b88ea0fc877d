"""Clock and episode samples -> /clock and /sim/episode, as the spec's Time and Episode Clock say."""

from __future__ import annotations

import json

import pytest
from acres_interfaces.msg import Episode
from rclpy.serialization import deserialize_message, serialize_message
from rosgraph_msgs.msg import Clock as ClockMessage

from acres_bridge.convert.session import clock, episode
from acres_bridge.wire import Clock, EpisodeInfo, Frame, FrameKind, SimState, decode, encode
from acres_bridge.wire.json_fields import MAX_STAMP_NS

NS_PER_S = 1_000_000_000


def info(**changes) -> EpisodeInfo:
    fields = {
        "episode_id": "20261002T072309-0003",
        "episode": 3,
        "reset_epoch": 2,
        "step": 1405,
        "stamp_ns": 1405 * NS_PER_S // 120,
        "episode_time_s": 11.708333943970501,
        "state": SimState.PAUSED,
        "lockstep": True,
        "seed": 42,
        "source": "core",
        "map": "V03ACRE",
        "agents": ("polaris", "polaris2", "maxxum"),
    }
    fields.update(changes)
    return EpisodeInfo(**fields)


# ---- /clock --------------------------------------------------------------------------------------


def test_clock_of_the_spec_example():
    message = clock(Clock(step=3089, stamp_ns=25_741_668_009))
    assert isinstance(message, ClockMessage)
    assert (message.clock.sec, message.clock.nanosec) == (25, 741_668_009)


@pytest.mark.parametrize("step", [0, 1, 119, 120, 121, 1405, 3089, 1_000_000])
def test_clock_of_a_physics_step(step):
    stamp_ns = step * NS_PER_S // 120
    message = clock(Clock(step=step, stamp_ns=stamp_ns))
    assert message.clock.sec == stamp_ns // NS_PER_S
    assert message.clock.nanosec == stamp_ns % NS_PER_S
    assert message.clock.sec * NS_PER_S + message.clock.nanosec == stamp_ns


def test_clock_of_a_decoded_frame():
    frame = Frame(FrameKind.CLOCK, (3089).to_bytes(8, "little") + (25_741_668_009).to_bytes(8, "little"))
    message = clock(decode(frame))
    assert (message.clock.sec, message.clock.nanosec) == (25, 741_668_009)


# ---- /sim/episode --------------------------------------------------------------------------------


def test_episode_copies_every_field_of_the_spec_table():
    sample = info()
    message = episode(sample)
    assert isinstance(message, Episode)
    assert message.episode_id == "20261002T072309-0003"
    assert message.episode == 3
    assert message.reset_epoch == 2
    assert message.step == 1405
    assert message.episode_time_s == 11.708333943970501
    assert message.state == 2
    assert message.lockstep is True
    assert message.seed == 42
    assert message.source == "core"
    assert message.map == "V03ACRE"
    assert list(message.agents) == ["polaris", "polaris2", "maxxum"]


def test_episode_is_stamped_with_the_time_of_its_step():
    message = episode(info())
    assert (message.header.stamp.sec, message.header.stamp.nanosec) == (11, 708_333_333)
    assert message.header.frame_id == ""


def test_episode_stamp_comes_from_stamp_ns_not_from_episode_time():
    message = episode(info(stamp_ns=25_741_668_009, episode_time_s=0.5))
    assert (message.header.stamp.sec, message.header.stamp.nanosec) == (25, 741_668_009)
    assert message.episode_time_s == 0.5


@pytest.mark.parametrize("state", list(SimState))
def test_episode_every_state(state):
    assert episode(info(state=state)).state == int(state)


@pytest.mark.parametrize("source", ["unreal", "core"])
@pytest.mark.parametrize("lockstep", [True, False])
def test_episode_source_and_lockstep(source, lockstep):
    message = episode(info(source=source, lockstep=lockstep))
    assert (message.source, message.lockstep) == (source, lockstep)


def test_episode_agent_0_comes_first():
    assert list(episode(info(agents=("b", "a"))).agents) == ["b", "a"]


def test_episode_of_the_spec_example_from_the_wire():
    payload = json.dumps(
        {
            "episode_id": "20261002T072309-0000",
            "episode": 0,
            "reset_epoch": 0,
            "step": 1405,
            "stamp_ns": 11_708_333_944,
            "episode_time_s": 11.708333943970501,
            "state": 1,
            "lockstep": False,
            "seed": 42,
            "source": "unreal",
            "map": "V03ACRE",
            "agents": ["polaris"],
        }
    ).encode()
    message = episode(decode(Frame(FrameKind.EPISODE, payload)))
    assert (message.header.stamp.sec, message.header.stamp.nanosec) == (11, 708_333_944)
    assert message.episode_id == "20261002T072309-0000"
    assert (message.episode, message.reset_epoch, message.step) == (0, 0, 1405)
    assert message.episode_time_s == 11.708333943970501
    assert (message.state, message.lockstep, message.seed) == (1, False, 42)
    assert (message.source, message.map, list(message.agents)) == ("unreal", "V03ACRE", ["polaris"])


def test_episode_the_largest_values_the_decoder_accepts_fit_the_message():
    message = episode(info(episode=2**32 - 1, reset_epoch=2**32 - 1, step=2**64 - 1, seed=2**32 - 1))
    again = deserialize_message(serialize_message(message), Episode)
    assert again == message
    assert (again.episode, again.reset_epoch, again.step, again.seed) == (
        2**32 - 1,
        2**32 - 1,
        2**64 - 1,
        2**32 - 1,
    )


def test_clock_survives_serialisation():
    message = clock(Clock(step=3089, stamp_ns=25_741_668_009))
    assert deserialize_message(serialize_message(message), ClockMessage) == message


def test_the_latest_decodable_clock_and_episode_keep_their_stamp():
    """The decoders accept stamps up to MAX_STAMP_NS, the last nanosecond of an int32 second."""
    for sample, kind, message_type in (
        (Clock(step=2**64 - 1, stamp_ns=MAX_STAMP_NS), FrameKind.CLOCK, ClockMessage),
        (info(stamp_ns=MAX_STAMP_NS), FrameKind.EPISODE, Episode),
    ):
        decoded = decode(Frame(kind, encode(sample)[16:]))
        message = clock(decoded) if kind is FrameKind.CLOCK else episode(decoded)
        again = deserialize_message(serialize_message(message), message_type)
        time = again.clock if kind is FrameKind.CLOCK else again.header.stamp
        assert (time.sec, time.nanosec) == (2**31 - 1, 999_999_999)
