"""acres_topics: print the topics of a vehicle as msg_profiles defines them.

acres_topics --table polaris
acres_topics --table maxxum --namespace /maxxum
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from acres_bridge.msg_profiles import load_profiles
from acres_bridge.names import resolve_name
from acres_bridge.text_tables import format_rate, format_table

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Print the topics of a table of msg_profiles.")
    parser.add_argument(
        "--table", default="polaris", help="polaris, maxxum, session, episode_log, other_nodes"
    )
    parser.add_argument("--namespace", default="/", help="namespace of the bridge (default /)")
    args = parser.parse_args(argv)
    profiles = load_profiles(check_types=False)
    rows = [
        (
            resolve_name(spec.name, args.namespace),
            spec.type_name,
            spec.direction.value,
            format_rate(spec),
            spec.qos.name if spec.qos else "",
            spec.frame or "",
        )
        for spec in profiles.table(args.table)
    ]
    print(format_table(rows, ("topic", "type", "direction", "rate", "qos", "frame")))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
