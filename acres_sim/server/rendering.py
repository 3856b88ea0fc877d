"""The clouds and images on their way to the sensor channels, and free run's render thread.

A step's sensor frames go on the wire by agent, to the agents whose sensor stream is open
(`perception_frames`). In lockstep the world makes them inline, in a deterministic order. In free
run it hands them out as capture jobs (World.defer_perception) and `RenderThread` makes them in a
thread of its own (numpy lets go of the GIL), so a camera frame never holds up the physics, the
INS and the clock; their frames are queued, in step order and stamped with their step, as soon as
they are ready. One perception step is rendered at a time: one that comes while the thread is
still busy is skipped and counted. Flushing the queued frames is the server's.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor

from acres_sim.sensors.rig import CaptureJob
from acres_sim.sensors.sensor_model import SensorFrame
from acres_sim.server.clients import Client, Clients
from acres_sim.world.wire import sensor_frame

__all__ = ["RenderThread", "perception_frames"]

_log = logging.getLogger("acres_sim.server")
# Free run: one perception step at a time with the render thread. A step that comes while it is
# busy is skipped, so a frame is never more than one render late and frames never bunch up.
_RENDERS_IN_FLIGHT = 1

Captured = tuple[SensorFrame, ...]  # the sensor frames of a step


def perception_frames(
    connections: Iterable[Client], step: int, stamp_ns: int, sensors: Sequence[SensorFrame]
) -> dict[int, list[bytes]]:
    """The sensor frames of a step on the wire, by agent, for the agents whose stream is open."""
    frames: dict[int, list[bytes]] = {}
    if sensors:
        readers = {c.agent for c in connections if c.ready and c.listener == "sensor"}
        for frame in sensors:
            if frame.agent in readers:
                frames.setdefault(frame.agent, []).append(sensor_frame(step, stamp_ns, frame))
    return frames


class RenderThread:
    """Free run's perception steps, made one at a time in a thread and queued for their sensor channels."""

    def __init__(self, clients: Clients) -> None:
        """Queue the frames on the sensor channels among `clients`' connections."""
        self._clients = clients
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="acres-render")
        self._renders: deque[tuple[int, int, Future[Captured]]] = deque()
        self.skipped = 0  # perception steps skipped because the thread was busy

    @property
    def busy(self) -> bool:
        """A perception step is being made, or its frames have yet to be queued."""
        return bool(self._renders)

    def submit(self, job: CaptureJob) -> None:
        """Hand a perception step to the render thread, unless it is still busy with the last one:
        then the frames of this step are skipped and counted, as a real sensor that cannot keep up
        skips them, so that neither memory nor the frames' delay grows, and frames never come in a
        burst. The pace report says how many were skipped."""
        if len(self._renders) >= _RENDERS_IN_FLIGHT:
            self.skipped += 1
            if self.skipped == 1:
                _log.warning(
                    "rendering cannot keep up with real time: skipped the clouds and images of step %d "
                    "(the pace reports count what is skipped)",
                    job.step,
                )
            return
        self._renders.append((job.step, job.stamp_ns, self._executor.submit(job.run)))

    def queue_ready(self, *, wait: bool) -> bool:
        """Queue the sensor frames the render thread has made, in step order (all, with wait);
        whether any step's were."""
        queued = False
        while self._renders and (wait or self._renders[0][2].done()):
            step, stamp_ns, render = self._renders.popleft()
            connections = self._clients.connections
            for agent, frames in perception_frames(connections, step, stamp_ns, render.result()).items():
                for connection in connections:
                    if connection.ready and connection.listener == "sensor" and connection.agent == agent:
                        connection.out += b"".join(frames)
            queued = True
        return queued

    def close(self) -> None:
        """Stop the thread: a step it has not begun is dropped, the one it is making is finished."""
        self._executor.shutdown(wait=True, cancel_futures=True)
