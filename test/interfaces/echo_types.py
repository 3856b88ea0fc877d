"""Subscribe to one test topic per message type and report each message that arrives.

Usage: echo_types.py [--timeout SECONDS] TYPE [TYPE ...]   with TYPE written as pkg/msg/Name.

The topic of a type is /acres_test/<pkg>_<Name> (QoS: reliable, transient local, depth 1). The first
message of each type is reported on stdout as one JSON line {"type", "sha256", "cdr_len"}. The process
exits 0 once every type has arrived, or 1 after the timeout with the missing types on stderr.

The digest is taken over the field values, not over serialize_message() bytes: Fast CDR leaves the
alignment padding uninitialised, so two processes serialise equal messages to different bytes. The CDR
length is reported alongside, as it does not depend on the padding contents.
"""

import argparse
import hashlib
import importlib
import json
import os
import sys
import time
from functools import partial
from typing import Any

import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.serialization import serialize_message

QOS = QoSProfile(
    history=HistoryPolicy.KEEP_LAST,
    depth=1,
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.TRANSIENT_LOCAL,
)


def topic_for(type_name: str) -> str:
    pkg, _, name = type_name.split("/")
    return f"/acres_test/{pkg}_{name}"


def import_type(type_name: str) -> Any:
    pkg, kind, name = type_name.split("/")
    return getattr(importlib.import_module(f"{pkg}.{kind}"), name)


def canonical(value: Any) -> Any:
    """JSON-ready form of a message value; floats as exact hex so that nothing is rounded away."""
    if hasattr(value, "get_fields_and_field_types"):
        return {name: canonical(getattr(value, name)) for name in value.get_fields_and_field_types()}
    if hasattr(value, "tolist"):  # array.array, numpy arrays and numpy scalars
        value = value.tolist()
    if isinstance(value, list | tuple):
        return [canonical(item) for item in value]
    if isinstance(value, float):
        return value.hex()
    if isinstance(value, bytes):
        return value.hex()
    return value


def digest(msg: Any) -> str:
    text = json.dumps([type(msg).__module__, type(msg).__qualname__, canonical(msg)], separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def report(pending: set[str], type_name: str, msg: Any) -> None:
    if type_name not in pending:
        return
    pending.discard(type_name)
    line = {"type": type_name, "sha256": digest(msg), "cdr_len": len(serialize_message(msg))}
    print(json.dumps(line), flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for all types")
    parser.add_argument("types", nargs="+", help="message types as pkg/msg/Name")
    args = parser.parse_args(argv)

    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    pending = set(args.types)
    rclpy.init()
    try:
        node = rclpy.create_node("acres_test_echo_types")
        for type_name in args.types:
            try:
                msg_type = import_type(type_name)
            except (ImportError, AttributeError, ValueError) as exc:
                print(f"cannot import {type_name}: {exc!r}", file=sys.stderr)
                continue
            node.create_subscription(msg_type, topic_for(type_name), partial(report, pending, type_name), QOS)
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        deadline = time.monotonic() + args.timeout
        while pending and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.1)
    finally:
        rclpy.try_shutdown()
    for type_name in sorted(pending):
        print(f"missing: {type_name}", file=sys.stderr)
    return 1 if pending else 0


if __name__ == "__main__":
    sys.exit(main())
