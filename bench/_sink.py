"""A subscriber that takes clouds and images and does nothing with them: the far end of a bench.

python -m bench._sink TOPIC ...: subscribes to each topic (PointCloud2 if its name ends in
points, Image otherwise) with the spec's vehicle QoS, prints a line once subscribed, and spins
until it is ended.
"""

from __future__ import annotations

import sys

import rclpy
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import Image, PointCloud2

READY_LINE = "sink: subscribed"


def main(topics: list[str]) -> int:
    rclpy.init(args=[])
    node = Node("bench_sink")
    qos = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
    for topic in topics:
        node.create_subscription(
            PointCloud2 if topic.endswith("points") else Image, topic, lambda _m: None, qos
        )
    print(READY_LINE, flush=True)
    try:
        rclpy.spin(node)
    except KeyboardInterrupt:
        pass
    finally:
        node.destroy_node()
        rclpy.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
