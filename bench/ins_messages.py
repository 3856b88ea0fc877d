"""INS messages: one INS sample to its five published Polaris messages, two ways.

The bridge's way (acres_bridge.convert.ins_cdr): each message packed straight to CDR and published
as bytes. The reference (acres_bridge.convert.ins): each message built as an rclpy message object
and published, which rclpy reads back field by field into C and serializes. Both publish to
topics of this process's node with nobody subscribed (what DDS delivery costs is the same for
both), and alternate batch by batch, so load from elsewhere falls on both alike; figures are
medians of the per-sample wall time of each batch. A Polaris publishes 100 samples a simulated
second.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

from geometry_msgs.msg import TwistStamped
from nav_msgs.msg import Odometry
from sensor_msgs.msg import Imu, NavSatFix

from acres_bridge.convert import ins
from acres_bridge.convert.frame_names import frame_names
from acres_bridge.convert.ins_cdr import InsEncoders
from acres_bridge.wire.messages import InsSample
from bench._ros import BenchNode
from bench._stats import median, spread
from bench.core import Benchmark, Outcome, Row, Settings

__all__ = ["BENCHMARK", "run"]

SERIALIZED = "INS sample -> its 5 Polaris messages, serialized to CDR"
OBJECTS = "INS sample -> its 5 Polaris messages, as message objects"
RATIO = "INS messages: message objects / serialized"
ROWS = ((SERIALIZED, "us"), (OBJECTS, "us"), (RATIO, "x"))

_FRAMES = frame_names(vehicle="polaris")
_IMU_FRAME, _FIX_FRAME, _VELOCITY_FRAME = "imu_link", "gps", "oxts_link"


def _sample(step: int) -> InsSample:
    """A driving Polaris with a fix, its values all different from zero."""
    return InsSample(
        step=step,
        stamp_ns=step * 1_000_000_000 // 120,
        has_position=True,
        position=(500038.1, 4479963.9, 181.8),
        latitude_deg=40.4699,
        longitude_deg=-86.9952,
        orientation=(0.01, -0.02, 0.38, 0.92),
        velocity=(4.9, 0.1, -0.01),
        angular_rate=(0.01, -0.02, 0.2),
        specific_force=(0.3, 0.9, 9.81),
        position_variance=(0.0004, 0.0009, 0.0025),
        velocity_variance=(0.0001, 0.0002, 0.0003),
        attitude_variance=(1e-6, 2e-6, 5e-6),
        angular_rate_variance=(1e-5, 1e-5, 2e-5),
        specific_force_variance=(1e-3, 1e-3, 2e-3),
        true_position=(500038.0, 4479964.0, 181.8),
        true_orientation=(0.01, -0.02, 0.38, 0.92),
        true_speed=4.9,
    )


def _ways(ros: BenchNode) -> tuple[Callable[[InsSample], None], Callable[[InsSample], None]]:
    """Publish one sample's messages the bridge's way, and the reference way."""
    node = ros.node
    imu, velocity, odom, fix, truth = (
        node.create_publisher(kind, f"/bench/ins/{name}", 10)
        for kind, name in (
            (Imu, "imu"),
            (TwistStamped, "velocity"),
            (Odometry, "odom"),
            (NavSatFix, "fix"),
            (Odometry, "truth"),
        )
    )
    encode = InsEncoders(
        _FRAMES, imu_frame=_IMU_FRAME, fix_frame=_FIX_FRAME, velocity_frame=_VELOCITY_FRAME, oxts_axes=True
    )

    def serialized(sample: InsSample) -> None:
        imu.publish(encode.imu(sample))
        velocity.publish(encode.oxts_velocity(sample))
        odom.publish(encode.odometry(sample))
        fix.publish(encode.navsat_fix(sample))
        truth.publish(encode.ground_truth_odometry(sample))

    def objects(sample: InsSample) -> None:
        imu.publish(ins.imu(sample, _IMU_FRAME, oxts_axes=True))
        velocity.publish(ins.oxts_velocity(sample, _VELOCITY_FRAME))
        odom.publish(ins.odometry(sample, _FRAMES))
        fix.publish(ins.navsat_fix(sample, _FIX_FRAME))
        truth.publish(ins.ground_truth_odometry(sample, _FRAMES))

    return serialized, objects


def _per_sample_us(way: Callable[[InsSample], None], samples: list[InsSample]) -> float:
    started = time.perf_counter()
    for sample in samples:
        way(sample)
    return (time.perf_counter() - started) / len(samples) * 1e6


def run(settings: Settings) -> Outcome:
    repetitions = settings.pick(15, 3)
    samples = [_sample(step) for step in range(1, settings.pick(2000, 200) + 1)]
    print("  INS messages: two ways, alternating ...", file=sys.stderr, flush=True)
    with BenchNode() as ros:
        serialized, objects = _ways(ros)
        _per_sample_us(serialized, samples[:50])  # warm-up: imports, first publishes
        _per_sample_us(objects, samples[:50])
        fast: list[float] = []
        reference: list[float] = []
        for _ in range(repetitions):
            fast.append(_per_sample_us(serialized, samples))
            reference.append(_per_sample_us(objects, samples))
    how = f"median of {repetitions} x {len(samples)} samples"
    per_sim_s = "= {:.1f} ms of CPU per simulated second at 100 samples/s"
    return Outcome(
        rows=(
            Row(
                name=SERIALIZED,
                value=median(fast),
                unit="us",
                notes=f"the bridge's way {per_sim_s.format(median(fast) / 10)}; {how}, range {spread(fast)}",
            ),
            Row(
                name=OBJECTS,
                value=median(reference),
                unit="us",
                notes=f"the reference {per_sim_s.format(median(reference) / 10)}; {how}, "
                f"range {spread(reference)}",
            ),
            Row(
                name=RATIO,
                value=median(reference) / median(fast),
                unit="x",
                notes="same run, batches alternating",
            ),
        )
    )


BENCHMARK = Benchmark(key="ins_messages", rows=ROWS, run=run)
