"""line_follower: holds the Polaris on the straight line it starts on, through the drive-by-wire.

It runs on the real Polaris as it does against the simulator: the same topics, types and QoS.
It enables the drive-by-wire and shifts to L, then at 50 Hz of the node's clock (simulation time
with use_sim_time) sends a speed (/vehicle/ulc/cmd) and a curvature (/vehicle/steering/cmd) that
steer it back onto the line through its first pose, along its first heading. Each tick first takes
what its readers hold, so it computes from the newest odometry and reports even when the node lags
(in lockstep, from the data of the tick's step: the run repeats exactly).

Parameters: speed_mps (default 2.0).
"""

from __future__ import annotations

import math
import sys

import rclpy
from ds_dbw_msgs.msg import GearCmd, GearReport, SteeringCmd, UlcCmd
from nav_msgs.msg import Odometry
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from std_msgs.msg import Bool, Empty

GEAR_L = 5
LATERAL_GAIN = 0.1  # 1/m^2: curvature per metre off the line
HEADING_GAIN = 0.8  # 1/m: curvature per radian of heading error
STEERING_TRIM = 0.0  # 1/m: the steering's calibration offset
MAX_CURVATURE = 0.2
RATE_HZ = 50.0


def yaw_of(odom: Odometry) -> float:
    q = odom.pose.pose.orientation
    return math.atan2(2.0 * (q.w * q.z + q.x * q.y), 1.0 - 2.0 * (q.y * q.y + q.z * q.z))


def line_curvature(x: float, y: float, yaw: float, line: tuple[float, float, float]) -> float:
    """The curvature that steers a vehicle at (x, y, yaw) back onto the line (x0, y0, yaw0)."""
    x0, y0, yaw0 = line
    lateral = -math.sin(yaw0) * (x - x0) + math.cos(yaw0) * (y - y0)  # left of the line: positive
    heading = math.atan2(math.sin(yaw - yaw0), math.cos(yaw - yaw0))
    curvature = -LATERAL_GAIN * lateral - HEADING_GAIN * heading + STEERING_TRIM
    return max(-MAX_CURVATURE, min(MAX_CURVATURE, curvature))


class LineFollower(Node):
    def __init__(self) -> None:
        super().__init__("line_follower")
        self.speed = float(self.declare_parameter("speed_mps", 2.0).value)
        self.enable = self.create_publisher(Empty, "/vehicle/enable", 10)
        self.gear = self.create_publisher(GearCmd, "/vehicle/gear/cmd", 10)
        self.ulc = self.create_publisher(UlcCmd, "/vehicle/ulc/cmd", 10)
        self.steering = self.create_publisher(SteeringCmd, "/vehicle/steering/cmd", 10)
        self.odom: Odometry | None = None
        self.line: tuple[float, float, float] | None = None
        self.enabled = False
        self.gear_now = 0
        self.inputs = [
            self.create_subscription(Odometry, "/vehicle/odom", self.on_odom, 10),
            self.create_subscription(Bool, "/vehicle/dbw_enabled", self.on_enabled, 10),
            self.create_subscription(GearReport, "/vehicle/gear/report", self.on_gear, 10),
        ]
        self.create_timer(1.0 / RATE_HZ, self.tick)

    def take_pending(self) -> None:
        """Hand every message the readers hold to its callback now. rclpy's executor hands a
        subscription one message per wait and runs ready timers first: without this, a node that
        lags ticks on data older than its newest."""
        for subscription in self.inputs:
            with subscription.handle:
                while (taken := subscription.handle.take_message(subscription.msg_type, False)) is not None:
                    subscription.callback(taken[0])

    def on_odom(self, message: Odometry) -> None:
        self.odom = message
        if self.line is None:
            p = message.pose.pose.position
            self.line = (p.x, p.y, yaw_of(message))

    def on_enabled(self, message: Bool) -> None:
        self.enabled = message.data

    def on_gear(self, message: GearReport) -> None:
        self.gear_now = message.gear.value

    def tick(self) -> None:
        self.take_pending()
        if self.odom is None or self.line is None:
            return
        if not self.enabled:
            self.enable.publish(Empty())
        elif self.gear_now != GEAR_L:
            gear = GearCmd()
            gear.cmd.value = GEAR_L
            self.gear.publish(gear)
        ready = self.enabled and self.gear_now == GEAR_L
        p = self.odom.pose.pose.position
        curvature = line_curvature(p.x, p.y, yaw_of(self.odom), self.line) if ready else 0.0
        self.ulc.publish(UlcCmd(cmd=self.speed if ready else 0.0, cmd_type=UlcCmd.CMD_VELOCITY, enable=True))
        self.steering.publish(SteeringCmd(cmd=curvature, cmd_type=SteeringCmd.CMD_CURVATURE, enable=True))


def main(argv: list[str] | None = None) -> int:
    rclpy.init(args=argv)
    node = LineFollower()
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
