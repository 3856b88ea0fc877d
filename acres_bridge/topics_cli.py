"""acres_topics: print the topics of a vehicle as msg_profiles defines them.

acres_topics --table polaris
acres_topics --table maxxum --namespace /maxxum
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Sequence

from acres_bridge.msg_profiles import RateKind, TopicSpec, load_profiles

__all__ = ["format_rate", "format_table", "main", "resolve_name"]


def resolve_name(name: str, namespace: str) -> str:
    """The absolute name of a topic of a bridge in this namespace (absolute names stay)."""
    if name.startswith("/"):
        return name
    namespace = "/" + namespace.strip("/") if namespace.strip("/") else ""
    return f"{namespace}/{name}"


def format_rate(spec: TopicSpec) -> str:
    """The rate as the spec writes it: a frequency, or what drives the messages."""
    if spec.rate_kind is RateKind.PERIODIC and spec.rate_hz is not None:
        text = f"{spec.rate_hz:g} Hz"
        return f"{text} ({spec.burst}/burst)" if spec.burst > 1 else text
    return "" if spec.rate_kind is RateKind.NONE else spec.rate_kind.value.replace("_", " ")


def format_table(rows: Iterable[Sequence[str]], header: Sequence[str]) -> str:
    """A plain text table with columns padded to their widest cell."""
    table = [list(header), *(list(row) for row in rows)]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in table
    ]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines)


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
