"""Reading the fields of the protocol's JSON messages, checked: each function raises ProtocolError
naming the message (`what`), the field and the value found, for a missing field, a wrong type, a
value out of range or a non-finite number. Shared by every JSON decoder of the wire."""

from __future__ import annotations

import json
import math
from enum import StrEnum
from typing import Any, TypeVar

from acres_bridge.wire.errors import ProtocolError

__all__ = [
    "MAX_JSON_BYTES",
    "MAX_STAMP_NS",
    "check_stamp",
    "finite",
    "get_field",
    "json_object",
    "non_negative",
    "number",
    "one_of",
    "stamp_field",
    "triple",
]

E = TypeVar("E", bound=StrEnum)

MAX_STAMP_NS = (1 << 31) * 1_000_000_000 - 1  # builtin_interfaces/Time holds int32 seconds
MAX_JSON_BYTES = 65_536  # the longest JSON text taken: the protocol's messages need a few hundred bytes


def json_object(what: str, payload: bytes | str) -> dict[str, Any]:
    """The JSON object of a payload (UTF-8 bytes or text) of at most ``MAX_JSON_BYTES``.

    Every way a text can fail to be one is a ProtocolError: not UTF-8, not JSON, an integer beyond
    Python's digit limit, nesting beyond the recursion limit, too long, or another JSON value.
    """
    if len(payload) > MAX_JSON_BYTES:
        raise ProtocolError(f"{what}: payload of {len(payload)} bytes; at most {MAX_JSON_BYTES} are taken")
    try:
        text = payload.decode("utf-8") if isinstance(payload, bytes) else payload
        data = json.loads(text)
    except (UnicodeDecodeError, ValueError, RecursionError) as error:  # JSONDecodeError is a ValueError
        reason = str(error) if not isinstance(error, RecursionError) else "nested too deeply"
        raise ProtocolError(f"{what}: payload is not a UTF-8 JSON object ({reason[:200]})") from None
    if not isinstance(data, dict):
        raise ProtocolError(f"{what}: payload must be a JSON object, found {type(data).__name__}")
    return data


def get_field(
    what: str, data: dict[str, Any], key: str, kind: type | tuple[type, ...], default: Any = ...
) -> Any:
    if key not in data:
        if default is ...:
            raise ProtocolError(f"{what}: missing field {key!r}")
        return default
    value = data[key]
    ok = isinstance(value, kind) and not (isinstance(value, bool) and kind in (int, float, (int, float)))
    if kind is bool:
        ok = isinstance(value, bool)
    if not ok:
        names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise ProtocolError(f"{what}: field {key!r} must be {names}, found {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ProtocolError(f"{what}: field {key!r} must be finite, found {value!r}")
    return value


def finite(what: str, key: str, value: Any) -> float:
    """A JSON number as a finite float; an int too large for a float is refused, not an OverflowError."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ProtocolError(f"{what}: field {key!r} must be a number, found {value!r}")
    try:
        number = float(value)
    except OverflowError:
        raise ProtocolError(f"{what}: field {key!r} is too large for a float") from None
    if not math.isfinite(number):
        raise ProtocolError(f"{what}: field {key!r} must be finite, found {value!r}")
    return number


def number(what: str, data: dict[str, Any], key: str) -> float:
    return finite(what, key, get_field(what, data, key, (int, float)))


def non_negative(what: str, data: dict[str, Any], key: str, *, bits: int = 64) -> int:
    value: int = get_field(what, data, key, int)
    if not 0 <= value < 1 << bits:
        raise ProtocolError(f"{what}: field {key!r} must be a {bits}-bit unsigned integer, found {value}")
    return value


def stamp_field(what: str, data: dict[str, Any]) -> int:
    stamp_ns: int = get_field(what, data, "stamp_ns", int)
    check_stamp(what, stamp_ns)
    return stamp_ns


def one_of(what: str, data: dict[str, Any], key: str, choices: type[E]) -> E:
    """The member of a string enum that the field names."""
    value: str = get_field(what, data, key, str)
    if value not in tuple(choices):
        allowed = ", ".join(str(choice) for choice in choices)
        raise ProtocolError(f"{what}: field {key!r} must be one of {allowed}, found {value!r}")
    return choices(value)


def check_stamp(what: str, stamp_ns: int) -> None:
    """ProtocolError unless stamp_ns fits a builtin_interfaces/Time."""
    if not 0 <= stamp_ns <= MAX_STAMP_NS:
        raise ProtocolError(
            f"{what}: stamp_ns must be in 0 .. {MAX_STAMP_NS} (int32 seconds), found {stamp_ns}"
        )


def triple(what: str, data: dict[str, Any], key: str) -> tuple[float, float, float]:
    value = get_field(what, data, key, list)
    if len(value) != 3:
        raise ProtocolError(f"{what}: field {key!r} must be 3 finite numbers, found {len(value)} values")
    x, y, z = (finite(what, key, v) for v in value)
    return (x, y, z)
