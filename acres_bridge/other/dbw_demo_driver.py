"""dbw_demo_driver: drives the Polaris around the built-in route through the drive-by-wire.

Like the lab's demo driver: the ULC holds a speed and the steering follows the route by pure
pursuit, as a path curvature (spec: Drive-by-Wire Commands). The route is the simulator's built-in
loop on the tile, ``acres_sim.world.route.acre_loop()``, in the world frame; the vehicle's /vehicle/odom
is in utm, and the session's SENSOR_META (``world_origin_utm``) places the one in the other.

Publishes (names, types and QoS from msg_profiles: table ``polaris`` for the vehicle's command
topics, ``other_nodes`` for the others):

  /vehicle/enable        std_msgs/Empty: 0.5 s after the topic first has a subscriber (so that
                         discovery has settled on both sides), just before the first commands,
                         and again every 0.5 s while commands flow and /vehicle/dbw_enabled
                         does not report the drive-by-wire on (an enable lost to discovery is
                         repeated). Never once anyone has sent /vehicle/disable: the safety
                         driver's disable stays in force.
  /vehicle/gear/cmd      ds_dbw_msgs/GearCmd, cmd.value = parameter ``gear``, with each
                         command until /vehicle/gear/report shows that gear (a gear command
                         that arrives before the enable, or is lost to discovery, is repeated)
  /vehicle/ulc/cmd       ds_dbw_msgs/UlcCmd, CMD_VELOCITY, cmd = parameter ``speed_mps``, enable
  /vehicle/steering/cmd  ds_dbw_msgs/SteeringCmd, CMD_CURVATURE, cmd = the pure-pursuit
                         curvature in 1/m, clamped to +-0.2, enable
  /Demo/route            nav_msgs/Path, latched, once at the start: the route in the frame
                         demo_route_origin (its first point; the poses are relative to it)
  /tf_static             utm -> demo_route_origin (no rotation), when the session's georeference
                         arrives and again if it changes
  /Demo/status           std_msgs/String, JSON text at the rate of msg_profiles (50 Hz), with
                         the keys
                           state          "waiting" (no fresh odometry or no session yet) or
                                          "driving"
                           route_index    the route point at or before the vehicle (null while
                                          waiting)
                           route_size     the number of route points
                           curvature      the steering command in 1/m (null while waiting)
                           speed_mps      the ULC speed command in m/s (null while waiting)
                           cross_track_m  the distance from the route in m (null while waiting)

The commands go out with each status message, at 50 Hz of the node's clock (use_sim_time:=true
makes it the simulation time). Each tick first takes every message its readers hold, so it computes
from the newest odometry and reports even when the node lags (in lockstep: from the data of the
tick's step, so that a run repeats). Without odometry, or without the session's georeference, it sends
nothing but the enable; odometry older than 0.5 s (or with a non-finite pose) counts as none, so
the simulator's command timeout stops the vehicle. Command headers carry the node's time and the
frame base_footprint (the spec's parity report gives it for /vehicle/steering/cmd).

Parameters (besides those of every subsystem node; ``frame_prefix`` prefixes the frames):
  speed_mps    the ULC speed command in m/s (default 2.0, 0 to 18)
  lookahead_m  the pure-pursuit look-ahead along the route in m (default 6.0)
  gear         the gear command: 1 P, 2 R, 3 N, 4 H, 5 L (default 5, L)

Send commands only in a shell with the DDS loopback fence (env/setup_env.sh): the command topics
have the names of the real Polaris's.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from builtin_interfaces.msg import Time
from ds_dbw_msgs.msg import GearCmd, SteeringCmd, UlcCmd
from nav_msgs.msg import Odometry
from rcl_interfaces.msg import ParameterDescriptor
from std_msgs.msg import Empty, String
from tf2_msgs.msg import TFMessage

from acres_bridge.errors import ParameterError
from acres_bridge.geo.georef import Georeference
from acres_bridge.geo.rotation import yaw_from_quaternion
from acres_bridge.geo.route import acre_loop
from acres_bridge.ingest.channels import SESSION, Session
from acres_bridge.nodes.base import SubsystemNode, profiles
from acres_bridge.other import _wiring
from acres_bridge.other.paths import origin_transform, route_path
from acres_bridge.other.pursuit import PursuitCommand, RouteTracker, georeference, route_origin_utm
from acres_bridge.wire.vocabulary import Vehicle

__all__ = ["DbwDemoDriver", "main"]

ENABLE_DELAY_S = 0.5  # from the first subscriber of /vehicle/enable to the enable
ODOM_TIMEOUT_NS = 500_000_000
MAX_SPEED_MPS = 18.0  # the Polaris's governed top speed (acres_sim.vehicles.params)
ROUTE_TOPIC = "/Demo/route"
STATUS_TOPIC = "/Demo/status"


@dataclass(frozen=True, slots=True)
class _Odometry:
    x: float  # utm easting, m
    y: float  # utm northing, m
    yaw: float  # rad, counter-clockwise from grid east
    received_ns: int  # the node's clock


class DbwDemoDriver(SubsystemNode):
    """Follows the built-in route with ULC speed and steering-curvature commands."""

    DEFAULT_NODE_NAME = "dbw_demo_driver"
    SERVES = (Vehicle.POLARIS, "dbw_demo_driver drives a Polaris; vehicle is '{vehicle}'")

    def __init__(self, **node_options: Any) -> None:
        super().__init__(**node_options)
        self.speed_mps = _wiring.finite_parameter(
            self,
            "speed_mps",
            2.0,
            "the ULC speed command in m/s",
            valid=lambda v: 0.0 <= v <= MAX_SPEED_MPS,
            expected=f"from 0 to {MAX_SPEED_MPS} m/s",
        )
        lookahead_m = _wiring.finite_parameter(
            self,
            "lookahead_m",
            6.0,
            "the pure-pursuit look-ahead in m",
            valid=lambda v: v > 0.0,
            expected="above 0 m",
        )
        gear = self.declare_parameter(
            "gear", 5, ParameterDescriptor(description="1 P, 2 R, 3 N, 4 H, 5 L", read_only=True)
        ).value
        if isinstance(gear, bool) or not isinstance(gear, int) or not 1 <= gear <= 5:
            raise ParameterError(
                f"parameter gear must be 1 (P), 2 (R), 3 (N), 4 (H) or 5 (L), found {gear!r}"
            )
        self.gear = gear
        self.tracker = RouteTracker(acre_loop(), lookahead_m=lookahead_m)
        self.route_frame = self.frames.apply(
            profiles().topic("other_nodes", ROUTE_TOPIC).frame or "demo_route_origin"
        )

        self._enable = _wiring.publisher(self, "polaris", "/vehicle/enable")
        self._gear = _wiring.publisher(self, "polaris", "/vehicle/gear/cmd")
        self._gear_engaged = False
        self._dbw_enabled = False
        self._disabled = False  # someone sent /vehicle/disable: never enable again
        self._inputs = [  # taken at each tick (_wiring.take_pending), the odometry's added below
            _wiring.subscription(self, "polaris", "/vehicle/gear/report", self._on_gear_report),
            _wiring.subscription(self, "polaris", "/vehicle/dbw_enabled", self._on_dbw_enabled),
            _wiring.subscription(self, "polaris", "/vehicle/disable", self._on_disable),
        ]
        self._ulc = _wiring.publisher(self, "polaris", "/vehicle/ulc/cmd")
        self._steering = _wiring.publisher(self, "polaris", "/vehicle/steering/cmd")
        self._route = _wiring.publisher(self, "other_nodes", ROUTE_TOPIC)
        self._status = _wiring.publisher(self, "other_nodes", STATUS_TOPIC)
        self._tf_static = _wiring.publisher(self, "other_nodes", "/tf_static")

        self._ticks = 0
        self._enable_tick: int | None = None  # the tick to send the enable at, once there is a subscriber
        self._enabled_at_start = False
        self._enabled_for_commands = False  # enable sent right before the first commands
        self._last_enable_tick = 0
        self._odometry: _Odometry | None = None
        self._georef: Georeference | None = None  # set by the session, maybe in the ingest's thread
        self._tracked_georef: Georeference | None = None  # the georeference the tracker's progress is in
        self._inputs.append(_wiring.subscription(self, "polaris", "/vehicle/odom", self._on_odom))
        self._route.publish(
            route_path(self.tracker.route, frame=self.route_frame, stamp=self.get_clock().now().to_msg())
        )
        rate = profiles().topic("other_nodes", STATUS_TOPIC).rate_hz or 50.0
        self._enable_delay_ticks = round(ENABLE_DELAY_S * rate)
        self._timer = self.create_timer(1.0 / rate, self._tick)
        self.samples(SESSION, self._on_session)

    # ---- inputs -------------------------------------------------------------------------------

    def _on_session(self, session: Session) -> None:
        meta = session.meta(self.agent)
        if meta is None:
            return
        try:
            georef = georeference(meta)
        except ParameterError as error:
            self.get_logger().error(f"refused the georeference of agent {self.agent}: {error}")
            return
        if georef == self._georef:
            return
        origin = route_origin_utm(self.tracker.route, georef)
        transform = origin_transform(
            parent=self.frames.utm,
            child=self.route_frame,
            origin=origin,
            stamp=self.get_clock().now().to_msg(),
        )
        self._tf_static.publish(TFMessage(transforms=[transform]))
        self._georef = georef
        self.get_logger().info(f"{self.route_frame} is at {origin} in {self.frames.utm}")

    def _on_odom(self, message: Odometry) -> None:
        p, q = message.pose.pose.position, message.pose.pose.orientation
        values = (p.x, p.y, q.x, q.y, q.z, q.w)
        if not all(math.isfinite(v) for v in values) or q.x == q.y == q.z == q.w == 0.0:
            self.get_logger().warning("dropped odometry with an invalid pose", throttle_duration_sec=5.0)
            return
        yaw = yaw_from_quaternion((q.x, q.y, q.z, q.w))
        self._odometry = _Odometry(p.x, p.y, yaw, self.get_clock().now().nanoseconds)

    # ---- the 50 Hz tick -----------------------------------------------------------------------

    def _tick(self) -> None:
        _wiring.take_pending(self._inputs)  # the newest odometry and reports, not the executor's next
        now = self.get_clock().now()
        self._ticks += 1
        if self._enable_tick is None and self._enable.get_subscription_count() > 0:
            self._enable_tick = self._ticks + self._enable_delay_ticks
        if not self._enabled_at_start and self._enable_tick is not None and self._ticks >= self._enable_tick:
            self._send_enable("/vehicle/enable has a subscriber")
            self._enabled_at_start = True
        command = self._command(now.nanoseconds)
        if command is None:
            self._publish_status(None)
            return
        if not self._enabled_for_commands:
            self._send_enable("the first commands follow")
            self._enabled_for_commands = self._enabled_at_start = True
            self._last_enable_tick = self._ticks
        elif (
            not self._dbw_enabled
            and not self._disabled
            and self._ticks - self._last_enable_tick >= self._enable_delay_ticks
        ):
            self._send_enable("the drive-by-wire does not report enabled")
            self._last_enable_tick = self._ticks
        stamp = now.to_msg()
        if not self._gear_engaged:
            self._gear.publish(self._gear_command(stamp))
        self._ulc.publish(self._ulc_command(stamp))
        self._steering.publish(self._steering_command(stamp, command.curvature))
        self._publish_status(command)

    def _command(self, now_ns: int) -> PursuitCommand | None:
        """The pursuit command for the latest odometry; None without fresh odometry or a session."""
        odometry, georef = self._odometry, self._georef
        if odometry is None or georef is None or not 0 <= now_ns - odometry.received_ns <= ODOM_TIMEOUT_NS:
            return None
        if georef is not self._tracked_georef:
            self.tracker.reset()
            self._tracked_georef = georef
        x, y, _ = georef.utm_to_world(odometry.x, odometry.y, 0.0)
        return self.tracker.command(x, y, odometry.yaw)

    def _on_gear_report(self, report: Any) -> None:
        self._gear_engaged = report.gear.value == self.gear

    def _on_dbw_enabled(self, message: Any) -> None:
        self._dbw_enabled = bool(message.data)

    def _on_disable(self, _message: Any) -> None:
        if not self._disabled:
            self.get_logger().warning(
                "/vehicle/disable seen: the driver will not enable the drive-by-wire again"
            )
        self._disabled = True

    def _send_enable(self, why: str) -> None:
        self._enable.publish(Empty())
        self.get_logger().info(f"sent /vehicle/enable: {why}")

    def _header(self, message: Any, stamp: Time) -> Any:
        message.header.stamp = stamp
        message.header.frame_id = self.frames.base_footprint
        return message

    def _gear_command(self, stamp: Time) -> GearCmd:
        message = self._header(GearCmd(), stamp)
        message.cmd.value = self.gear
        return message

    def _ulc_command(self, stamp: Time) -> UlcCmd:
        message = UlcCmd(cmd=self.speed_mps, cmd_type=UlcCmd.CMD_VELOCITY, enable=True)
        return self._header(message, stamp)

    def _steering_command(self, stamp: Time, curvature: float) -> SteeringCmd:
        message = SteeringCmd(cmd=curvature, cmd_type=SteeringCmd.CMD_CURVATURE, enable=True)
        return self._header(message, stamp)

    def _publish_status(self, command: PursuitCommand | None) -> None:
        status: dict[str, Any] = {
            "state": "waiting" if command is None else "driving",
            "route_index": None if command is None else command.route_index,
            "route_size": self.tracker.route.size,
            "curvature": None if command is None else round(command.curvature, 6),
            "speed_mps": None if command is None else self.speed_mps,
            "cross_track_m": None if command is None else round(command.cross_track_m, 3),
        }
        self._status.publish(String(data=json.dumps(status)))


def main(argv: Sequence[str] | None = None) -> int:
    """Run dbw_demo_driver until SIGINT or SIGTERM."""
    return _wiring.run(DbwDemoDriver, argv)


if __name__ == "__main__":
    sys.exit(main())
