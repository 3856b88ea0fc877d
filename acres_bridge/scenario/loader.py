"""Read a scenario file: YAML in, a checked Scenario out, or an error naming the file, the line and
the field.

The values come from PyYAML's safe loader; the lines from the node tree it composes of the same
text, walked along the location of each error pydantic reports.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Final

import yaml
from pydantic import ValidationError

from acres_bridge.scenario.errors import ScenarioFileError
from acres_bridge.scenario.schema import CRITERION_KINDS, FORMAT_VERSION, Scenario

__all__ = ["MAX_FILE_BYTES", "load_scenario", "parse_scenario"]

MAX_FILE_BYTES: Final = 1 << 20  # a scenario is text a person writes
_MAX_ERRORS: Final = 10


def load_scenario(path: Path | str) -> Scenario:
    """The scenario of a file; ScenarioFileError when it cannot be read or is not a valid scenario."""
    file = Path(path)
    try:
        size = file.stat().st_size
        if size > MAX_FILE_BYTES:
            raise ScenarioFileError(f"{file}: {size} bytes; a scenario file has at most {MAX_FILE_BYTES}")
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ScenarioFileError(f"{file}: cannot read it: {error}") from None
    return parse_scenario(text, str(file))


def parse_scenario(text: str, file: str = "<scenario>") -> Scenario:
    """The scenario of a YAML text (`file` names it in errors)."""
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        raise ScenarioFileError(f"{file}{line}: not valid YAML: {getattr(error, 'problem', error)}") from None
    if not isinstance(root, yaml.MappingNode) or not isinstance(data, dict):
        raise ScenarioFileError(f"{file}:1: a scenario is a mapping whose first key is acres_scenario")
    _check_duplicates(root, file)
    first = root.value[0][0] if root.value else None
    if not isinstance(first, yaml.ScalarNode) or first.value != "acres_scenario":
        at = first.start_mark.line + 1 if first is not None else 1
        raise ScenarioFileError(
            f"{file}:{at}: the first key must be acres_scenario (the format's version, {FORMAT_VERSION})"
        )
    try:
        return Scenario.model_validate(data)
    except ValidationError as error:
        raise ScenarioFileError(_describe(error, root, file)) from None


def _check_duplicates(node: yaml.Node, file: str) -> None:
    """A key given twice in one mapping is an error (YAML loaders keep the last one silently)."""
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode):
                if key.value in seen:
                    raise ScenarioFileError(f"{file}:{key.start_mark.line + 1}: {key.value}: given twice")
                seen.add(key.value)
            _check_duplicates(value, file)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            _check_duplicates(item, file)


def _describe(error: ValidationError, root: yaml.Node, file: str) -> str:
    """One line per error: file:line: field: what is wrong."""
    lines = []
    for item in error.errors()[:_MAX_ERRORS]:
        node, field = _locate(root, tuple(item["loc"]))
        message = item["msg"]
        if item["type"] == "extra_forbidden":
            message = "unknown key"
        elif item["type"] == "union_tag_invalid":
            message = f"unknown kind {item['ctx']['tag']!r}; known: {item['ctx']['expected_tags']}"
        lines.append(f"{file}:{node.start_mark.line + 1}: {field or '(the file)'}: {message}")
    if error.error_count() > _MAX_ERRORS:
        lines.append(f"... and {error.error_count() - _MAX_ERRORS} more")
    return "\n".join(lines)


def _locate(root: yaml.Node, location: Sequence[int | str]) -> tuple[yaml.Node, str]:
    """The deepest node of the file along pydantic's `location` and the field's name in the file
    ('criteria[1].max_m'). A key's line is its key's; parts that are no key or index of the file
    (pydantic's names of a union's members) are passed over; a key the file lacks (a missing
    field) is named, on the line of the mapping that lacks it."""
    node: yaml.Node | None = root
    found: yaml.Node = root
    field = ""
    for part in location:
        if isinstance(node, yaml.MappingNode) and isinstance(part, str):
            match = next(
                (kv for kv in node.value if isinstance(kv[0], yaml.ScalarNode) and kv[0].value == part), None
            )
            if match is not None:
                found, node = match
            elif not _is_member_name(part):
                node = None
            else:
                continue
            field += f".{part}" if field else part
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
            node = found = node.value[part]
            field += f"[{part}]"
    return found, field


def _is_member_name(part: str) -> bool:
    """A location part that pydantic adds for a member of a union (a criterion's kind, a type)."""
    return part in _MEMBER_NAMES or part.startswith("function-")


_MEMBER_NAMES: Final = frozenset((*CRITERION_KINDS, "str", "int", "float", "bool", "tuple[...]"))
