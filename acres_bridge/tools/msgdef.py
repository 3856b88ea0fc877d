"""Message types and their definitions: type names, the installed .msg files, the full definition
text rosbag2 stores with a topic, the type hash, and the parsed field layout.

The full text is what rosbag2's local message definition source writes into the MCAP schema of
encoding ``ros2msg``: the root .msg file as installed, then, for each message type it uses, a line
of 80 ``=``, a line ``MSG: pkg/Type`` and that type's .msg file, depth first, each type once, the
dependencies of one file in sorted order. Foxglove, ``ros2 bag play``, mcap_ros2 and rosbags all
read it. The .msg files are looked up in ``share/<pkg>/msg/`` of each prefix on AMENT_PREFIX_PATH
and of this interpreter's prefix (the pip-only virtualenv sets no AMENT_PREFIX_PATH).
"""

from __future__ import annotations

import importlib
import json
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from rosbags.interfaces.typing import Typesdict
from rosbags.typesys import TypesysError, get_types_from_msg

from acres_bridge.tools.errors import DefinitionError

__all__ = [
    "DEFINITION_SEPARATOR",
    "MAX_DEPTH",
    "TypeName",
    "definition_file",
    "definition_text",
    "message_class",
    "message_dependencies",
    "parse_definition",
    "parse_type_name",
    "share_prefixes",
    "type_hash",
]

DEFINITION_SEPARATOR = "=" * 80
MAX_DEPTH = 50  # nesting levels of message types, as rosbag2 allows

_NAME = r"[A-Za-z][A-Za-z0-9_]*"
_TYPE = re.compile(rf"^({_NAME})/(?:({_NAME})/)?({_NAME})$")
# A field's type at the start of a line: "pkg/Type[] name", "Type name", "float64[9] name". Comment
# lines and constants of primitive types yield nothing that is looked up.
_FIELD_TYPE = re.compile(r"(?:^|\n)\s*([a-zA-Z0-9_/]+)(?:\[[^\]]*\])?\s+")
_PRIMITIVES = frozenset(
    {
        "bool",
        "byte",
        "char",
        "float32",
        "float64",
        "int8",
        "uint8",
        "int16",
        "uint16",
        "int32",
        "uint32",
        "int64",
        "uint64",
        "string",
        "wstring",
    }
)


@dataclass(frozen=True)
class TypeName:
    """A message type: package, interface kind (``msg``) and name."""

    package: str
    kind: str
    name: str

    @property
    def full(self) -> str:
        """``pkg/msg/Name``: the form of topic types, MCAP schema names and the parity report."""
        return f"{self.package}/{self.kind}/{self.name}"

    @property
    def short(self) -> str:
        """``pkg/Name``: the form of ``MSG:`` lines and of field types in .msg files."""
        return f"{self.package}/{self.name}"


def parse_type_name(text: str) -> TypeName:
    """``pkg/msg/Name`` or ``pkg/Name`` (kind ``msg``)."""
    match = _TYPE.match(text)
    if match is None:
        raise DefinitionError(f"a message type looks like pkg/msg/Name or pkg/Name; found {text!r}")
    package, kind, name = match.groups()
    return TypeName(package, kind or "msg", name)


def share_prefixes() -> tuple[Path, ...]:
    """The install prefixes searched for share/<pkg>/: AMENT_PREFIX_PATH, then sys.prefix."""
    found = [Path(p) for p in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep) if p]
    found.append(Path(sys.prefix))
    return tuple(dict.fromkeys(found))


def definition_file(type_name: str, *, prefixes: Sequence[Path] | None = None, suffix: str = ".msg") -> Path:
    """The installed definition file of a type (``share/<pkg>/msg/<Name>.msg``)."""
    name = parse_type_name(type_name)
    searched = share_prefixes() if prefixes is None else tuple(prefixes)
    for prefix in searched:
        path = prefix / "share" / name.package / name.kind / f"{name.name}{suffix}"
        if path.is_file():
            return path
    places = ", ".join(str(p / "share" / name.package / name.kind) for p in searched) or "no prefix"
    raise DefinitionError(f"no {name.name}{suffix} of type {name.full} in {places}")


def message_dependencies(text: str, package: str) -> list[str]:
    """The message types a .msg text uses, as ``pkg/Name``, sorted; a bare name is in ``package``."""
    found: set[str] = set()
    for match in _FIELD_TYPE.finditer(text):
        field_type = match.group(1)
        if field_type in _PRIMITIVES:
            continue
        found.add(field_type if "/" in field_type else f"{package}/{field_type}")
    return sorted(found)


def definition_text(type_name: str, *, prefixes: Sequence[Path] | None = None) -> str:
    """The full ``ros2msg`` definition of a type, as rosbag2 writes it into an MCAP schema."""
    seen: set[str] = set()

    def append(short: str, depth: int) -> str:
        if depth > MAX_DEPTH:
            raise DefinitionError(f"{type_name} nests message types more than {MAX_DEPTH} levels deep")
        name = parse_type_name(short)
        text = definition_file(name.full, prefixes=prefixes).read_text()
        result = text
        for dependency in message_dependencies(text, name.package):
            if dependency in seen:
                continue
            seen.add(dependency)
            result += f"\n{DEFINITION_SEPARATOR}\nMSG: {dependency}\n" + append(dependency, depth + 1)
        return result

    return append(parse_type_name(type_name).short, 1)


def type_hash(type_name: str, *, prefixes: Sequence[Path] | None = None) -> str:
    """The RIHS01 type hash of an installed type (from its share/<pkg>/msg/<Name>.json), or "" when
    the installed package has no type description (distributions before Jazzy)."""
    name = parse_type_name(type_name)
    try:
        path = definition_file(type_name, prefixes=prefixes, suffix=".json")
    except DefinitionError:
        return ""
    try:
        hashes = json.loads(path.read_text()).get("type_hashes", [])
    except (json.JSONDecodeError, AttributeError) as error:
        raise DefinitionError(f"{path} is not a type description: {error}") from None
    for entry in hashes:
        if isinstance(entry, dict) and entry.get("type_name") == name.full:
            return str(entry.get("hash_string", ""))
    return ""


@cache
def message_class(type_name: str) -> type:
    """The Python message class of a type (imports its package)."""
    name = parse_type_name(type_name)
    try:
        module = importlib.import_module(f"{name.package}.{name.kind}")
    except ImportError as error:
        raise DefinitionError(
            f"unknown type {name.full}: package {name.package} is not installed ({error})"
        ) from None
    message = getattr(module, name.name, None)
    if not isinstance(message, type):
        raise DefinitionError(f"unknown type {name.full}: {name.package}.{name.kind} has no {name.name}")
    return message


def parse_definition(text: str, type_name: str) -> Typesdict:
    """The field layouts (rosbags' typesys form: type name -> (constants, fields)) of a full ``ros2msg``
    definition text and every type it embeds."""
    full = parse_type_name(type_name).full
    try:
        types = get_types_from_msg(text, full)
    except TypesysError as error:
        raise DefinitionError(f"the definition of {full} does not parse: {error}") from None
    return types
