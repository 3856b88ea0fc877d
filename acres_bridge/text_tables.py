"""Plain text tables of topics, as acres_topics and acres_demo print them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from acres_bridge.msg_profiles import RateKind, TopicSpec

__all__ = ["format_rate", "format_table"]


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
