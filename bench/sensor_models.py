"""The per-frame cost of the LiDAR and camera models: a table of `make bench`, or on its own with
python -m bench.sensor_models [--frames N].

Each row drives a vehicle along the built-in route of the V03ACRE tile (acres_sim.sensors.tile.acre_scene),
half a metre per frame on the ground, with two other vehicles in view, and times one sensor frame
per pose (after one frame of warm-up); the parked rows repeat one pose (the models reuse their last
ray cast). The driving rows run on both ray casters: the compiled one (every core) and the numpy
reference (one thread), in the same run, so that their ratio is measured; the Polaris's driving rows
also on the compiled caster with one thread, so that what the threads give is measured, not
assumed. The numbers are wall time per frame on this machine as it is.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numba
import numpy as np

from acres_bridge.geo.route import acre_loop
from acres_sim.sensors.camera import MAXXUM_CAMERA, POLARIS_CAMERA, Camera, camera_mount
from acres_sim.sensors.compiled_cast import Backend, warm_up
from acres_sim.sensors.lidar import MAXXUM_LIDAR, POLARIS_LIDAR, Lidar
from acres_sim.sensors.scene import Box, Scene
from acres_sim.sensors.tile import acre_scene, vehicle_box
from acres_sim.vehicles.kinematics import VehicleState, place
from acres_sim.vehicles.params import MAXXUM, POLARIS, VehicleParams
from bench._stats import median, spread
from bench.core import Benchmark, Outcome, Row, Settings

__all__ = ["BENCHMARK", "main", "run"]

_STEP_M = 0.5  # along the route per frame
_LIDAR_TARGET_MS = 3.0
_CAMERA_TARGET_MS = 15.0
_REFERENCE = " (numpy reference)"
_ONE_THREAD = ", one thread"


@dataclass(frozen=True, kw_only=True)
class _Row:
    name: str
    rays: int
    times_ms: list[float]
    target_ms: float | None


def _poses(scene: Scene, params: VehicleParams, frames: int) -> list[VehicleState]:
    route = acre_loop()
    poses = []
    for k in range(frames + 1):
        x, y, yaw = route.pose_at(k * _STEP_M)
        poses.append(place(params, x, y, yaw, terrain=scene.terrain))
    return poses


def _others(scene: Scene) -> tuple[Box, ...]:
    """Another Polaris 25 m behind on the route and a Maxxum parked beside it."""
    route = acre_loop()
    x, y, yaw = route.pose_at(-25.0)
    behind = vehicle_box(POLARIS, place(POLARIS, x, y, yaw, terrain=scene.terrain))
    parked = vehicle_box(MAXXUM, place(MAXXUM, 30.0, 0.0, 1.5708, terrain=scene.terrain))
    return behind, parked


def _scanning(
    lidar: Lidar, scene: Scene, others: tuple[Box, ...], *, crop: bool
) -> Callable[[VehicleState], object]:
    def frame(state: VehicleState) -> object:
        return lidar.scan(scene, state, agents=others, crop=crop)

    return frame


def _rendering(camera: Camera, scene: Scene, others: tuple[Box, ...]) -> Callable[[VehicleState], object]:
    def frame(state: VehicleState) -> object:
        return camera.render(scene, state, agents=others)

    return frame


def _time(frame: Callable[[VehicleState], object], poses: Sequence[VehicleState]) -> list[float]:
    frame(poses[0])  # warm-up
    times = []
    for pose in poses[1:]:
        start = time.perf_counter()
        frame(pose)
        times.append((time.perf_counter() - start) * 1e3)
    return times


def _time_one_thread(frame: Callable[[VehicleState], object], poses: Sequence[VehicleState]) -> list[float]:
    """`_time` with the compiled kernels on one thread."""
    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        return _time(frame, poses)
    finally:
        numba.set_num_threads(threads)


def _rows(frames: int) -> tuple[list[_Row], list[str]]:
    notes = []
    start = time.perf_counter()
    warm_up()
    notes.append(
        f"compiled caster: kernels loaded from numba's cache in {(time.perf_counter() - start) * 1e3:.0f} ms"
    )
    start = time.perf_counter()
    scene = acre_scene()
    notes.append(f"scene: acre_scene() built in {(time.perf_counter() - start) * 1e3:.0f} ms")
    others = _others(scene)
    rows = []
    for label, lidar_params, vehicle in (
        ("Polaris", POLARIS_LIDAR, POLARIS),
        ("Maxxum", MAXXUM_LIDAR, MAXXUM),
    ):
        poses = _poses(scene, vehicle, frames)
        n = lidar_params.points
        for backend, suffix in ((Backend.COMPILED, ""), (Backend.NUMPY, _REFERENCE)):
            lidar = Lidar(lidar_params, vehicle.mount("lidar"), seed=1, stream=0, backend=backend)
            for crop, what in ((True, "driving"), (False, "driving, no crop (Core)")):
                rows.append(
                    _Row(
                        name=f"{label} LiDAR scan, {what}{suffix}",
                        rays=n,
                        times_ms=_time(_scanning(lidar, scene, others, crop=crop), poses),
                        target_ms=None if suffix else _LIDAR_TARGET_MS,
                    )
                )
            if backend is Backend.COMPILED and vehicle is POLARIS:
                rows.append(
                    _Row(
                        name=f"{label} LiDAR scan, driving{_ONE_THREAD}",
                        rays=n,
                        times_ms=_time_one_thread(_scanning(lidar, scene, others, crop=True), poses),
                        target_ms=None,
                    )
                )
        rows.append(
            _Row(
                name=f"{label} LiDAR scan, parked",
                rays=n,
                times_ms=_time(_scanning(lidar, scene, others, crop=True), [poses[0]] * (frames + 1)),
                target_ms=None,
            )
        )
    for label, camera_params, vehicle in (
        ("Polaris", POLARIS_CAMERA, POLARIS),
        ("Maxxum", MAXXUM_CAMERA, MAXXUM),
    ):
        poses = _poses(scene, vehicle, frames)
        n = camera_params.width * camera_params.height
        for backend, suffix in ((Backend.COMPILED, ""), (Backend.NUMPY, _REFERENCE)):
            start = time.perf_counter()
            camera = Camera(camera_params, camera_mount(vehicle), backend=backend)
            made = (time.perf_counter() - start) * 1e3
            if not suffix:
                notes.append(f"{label} camera: made (every pixel undistorted) in {made:.0f} ms, once")
            rows.append(
                _Row(
                    name=f"{label} camera frame, driving{suffix}",
                    rays=n,
                    times_ms=_time(_rendering(camera, scene, others), poses),
                    target_ms=None if suffix else _CAMERA_TARGET_MS,
                )
            )
            if backend is Backend.COMPILED and vehicle is POLARIS:
                rows.append(
                    _Row(
                        name=f"{label} camera frame, driving{_ONE_THREAD}",
                        rays=n,
                        times_ms=_time_one_thread(_rendering(camera, scene, others), poses),
                        target_ms=None,
                    )
                )
        rows.append(
            _Row(
                name=f"{label} camera frame, parked",
                rays=n,
                times_ms=_time(_rendering(camera, scene, others), [poses[0]] * (frames + 1)),
                target_ms=None,
            )
        )
    by_name = {row.name: median(row.times_ms) for row in rows}
    for name, reference in by_name.items():
        if name.endswith(_REFERENCE):
            compiled = name.removesuffix(_REFERENCE)
            notes.append(
                f"{compiled}: compiled {reference / by_name[compiled]:.1f}x faster than the reference"
            )
        if name.endswith(_ONE_THREAD):
            compiled = name.removesuffix(_ONE_THREAD)
            notes.append(
                f"{compiled}: {numba.get_num_threads()} threads {reference / by_name[compiled]:.2f}x "
                "faster than one"
            )
    return rows, notes


def _table(rows: Sequence[_Row]) -> str:
    header = ("model", "rays", "median ms", "min..max ms", "target ms", "ns per ray")
    lines = [header]
    for row in rows:
        m = median(row.times_ms)
        lines.append(
            (
                row.name,
                f"{row.rays}",
                f"{m:.2f}",
                spread(row.times_ms),
                ""
                if row.target_ms is None
                else f"<= {row.target_ms:.0f}" + (" ok" if m <= row.target_ms else " MISSED"),
                f"{m * 1e6 / row.rays:.0f}",
            )
        )
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    out = []
    for i, line in enumerate(lines):
        out.append(" | ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip())
        if i == 0:
            out.append("-+-".join("-" * w for w in widths))
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    """Print the machine, then the table of per-frame costs."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.sensor_models", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--frames", type=int, default=30, help="timed frames per row (default 30)")
    args = parser.parse_args(argv)
    if args.frames < 1:
        parser.error(f"--frames: expected >= 1, got {args.frames}")
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    given = sys.argv[1:] if argv is None else list(argv)
    print(f"command: python -m bench.sensor_models {' '.join(given)}".rstrip())
    print(
        f"machine: {os.cpu_count()} CPUs, {platform.machine()}, {platform.system()} {platform.release()}, "
        f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
    )
    print(f"python {platform.python_version()}, numpy {np.__version__}; {args.frames} frames per row")
    rows, notes = _rows(args.frames)
    print()
    print(_table(rows))
    print()
    for note in notes:
        print(note)
    return 0


if __name__ == "__main__":
    sys.exit(main())


ROW_NAMES = tuple(
    name
    for vehicle in ("Polaris", "Maxxum")
    for name in (
        f"{vehicle} LiDAR scan, driving",
        *((f"{vehicle} LiDAR scan, driving{_ONE_THREAD}",) if vehicle == "Polaris" else ()),
        f"{vehicle} LiDAR scan, driving, no crop (Core)",
        f"{vehicle} LiDAR scan, driving{_REFERENCE}",
        f"{vehicle} LiDAR scan, driving, no crop (Core){_REFERENCE}",
        f"{vehicle} LiDAR scan, parked",
    )
) + tuple(
    name
    for vehicle in ("Polaris", "Maxxum")
    for name in (
        f"{vehicle} camera frame, driving",
        *((f"{vehicle} camera frame, driving{_ONE_THREAD}",) if vehicle == "Polaris" else ()),
        f"{vehicle} camera frame, driving{_REFERENCE}",
        f"{vehicle} camera frame, parked",
    )
)


def run(settings: Settings) -> Outcome:
    """The same rows for `make bench`: what a frame costs the simulator to make."""
    rows, notes = _rows(settings.pick(30, 5))
    by_name = {row.name: row for row in rows}
    table = []
    for name in ROW_NAMES:
        row = by_name[name]
        m = median(row.times_ms)
        target = "" if row.target_ms is None else f"target <= {row.target_ms:.0f} ms; "
        table.append(
            Row(
                name=f"simulator: {name}",
                value=m,
                unit="ms",
                notes=f"{target}{m * 1e6 / row.rays:.0f} ns per ray; range {spread(row.times_ms)}",
            )
        )
    return Outcome(rows=tuple(table), footnotes=tuple(f"Sensor models: {note}" for note in notes))


BENCHMARK = Benchmark(key="sensor_models", rows=tuple((f"simulator: {n}", "ms") for n in ROW_NAMES), run=run)
