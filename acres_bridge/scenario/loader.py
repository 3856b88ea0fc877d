"""Read a scenario file: YAML in, a checked Scenario out, or an error naming the file, the line and
the field.

The values come from PyYAML's safe loader; the lines from the node tree it composes of the same
text, walked along the location of each error pydantic reports.

The text is bounded before any value is made of it, so that no file costs more than its size
says: at most MAX_FILE_BYTES, nested at most MAX_YAML_DEPTH levels (PyYAML's composer recurses
once per level), and at most MAX_YAML_NODES nodes with each alias (``*name``) counted as the nodes
it repeats (a kilobyte of nested aliases stands for billions of values). Both are measured on the
composed node graph, in which an alias is one more reference to its anchor's node, so the
measure takes time linear in the file's size.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

import yaml
from pydantic import ValidationError

from acres_bridge.scenario.errors import ScenarioFileError
from acres_bridge.scenario.schema import CRITERION_KINDS, FORMAT_VERSION, Scenario

__all__ = ["MAX_FILE_BYTES", "MAX_YAML_DEPTH", "MAX_YAML_NODES", "load_scenario", "parse_scenario"]

MAX_FILE_BYTES: Final = 1 << 20  # a scenario is text a person writes
MAX_YAML_DEPTH: Final = 32  # levels of nesting; a scenario needs 7
MAX_YAML_NODES: Final = 500_000  # keys, values and items, aliases expanded; 10,000 sweep points need 250,000
_MAX_ERRORS: Final = 10


class _BeyondBound(yaml.MarkedYAMLError):
    """A YAML text beyond one of the loader's bounds, at the mark where it went beyond."""


class _BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe loader that refuses nesting deeper than MAX_YAML_DEPTH as it composes (before
    its recursion goes deeper), and gives a value it cannot make (an integer of thousands of
    digits, a date of year 0) as an error marked with its line."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self._depth = 0

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        self._depth += 1
        try:
            if self._depth > MAX_YAML_DEPTH:
                mark = self.peek_event().start_mark
                raise _BeyondBound(
                    problem=f"nested more than {MAX_YAML_DEPTH} levels deep; "
                    f"a scenario file nests at most {MAX_YAML_DEPTH}",
                    problem_mark=mark,
                )
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep)
        except (ValueError, OverflowError, TypeError) as error:
            raise yaml.constructor.ConstructorError(
                problem=f"cannot read the value {_excerpt(node)}: {str(error).split(';')[0]}",
                problem_mark=node.start_mark,
            ) from None


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
    if len(text) > MAX_FILE_BYTES:
        raise ScenarioFileError(
            f"{file}: {len(text)} characters; a scenario file has at most {MAX_FILE_BYTES}"
        )
    try:
        loader = _BoundedLoader(text)
        try:
            root = loader.get_single_node()
            if not isinstance(root, yaml.MappingNode):
                raise ScenarioFileError(
                    f"{file}:1: a scenario is a mapping whose first key is acres_scenario"
                )
            _check_size(root)
            _check_duplicates(root, file)
            _check_first_key(root, file)
            data = loader.construct_document(root)  # merges (<<) change the node tree: it is not read again
        finally:
            loader.dispose()
    except yaml.YAMLError as error:
        raise ScenarioFileError(_yaml_error(error, file)) from None
    try:
        return Scenario.model_validate(data)
    except ValidationError as error:
        raise ScenarioFileError(_describe(error, _compose(text), file)) from None


def _compose(text: str) -> yaml.Node:
    """The node tree of a text that has passed parse_scenario's checks, as it was before construction."""
    loader = _BoundedLoader(text)
    try:
        root = loader.get_single_node()
    finally:
        loader.dispose()
    assert root is not None
    return root


def _yaml_error(error: yaml.YAMLError, file: str) -> str:
    """file:line: what is wrong, for an error of PyYAML or of the loader's bounds."""
    mark = getattr(error, "problem_mark", None)
    line = f":{mark.line + 1}" if mark is not None else ""
    problem = getattr(error, "problem", None) or error
    return (
        f"{file}{line}: {problem}"
        if isinstance(error, _BeyondBound)
        else f"{file}{line}: not valid YAML: {problem}"
    )


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _check_size(root: yaml.Node) -> None:
    """_BeyondBound when the tree the node graph stands for (each alias expanded) is deeper than
    MAX_YAML_DEPTH or has more than MAX_YAML_NODES nodes, or when an alias lies inside its own
    anchor's node. Each node is measured once, children first, without recursion."""
    measured: dict[int, tuple[int, int]] = {}  # id of a node -> (its nodes, its depth), aliases expanded
    open_nodes: set[int] = set()  # the nodes on the path being walked
    pending: list[tuple[yaml.Node, bool]] = [(root, False)]
    while pending:
        node, children_done = pending.pop()
        if children_done:
            open_nodes.discard(id(node))
            parts = [measured[id(child)] for child in _children(node)]
            nodes = 1 + sum(n for n, _ in parts)
            depth = 1 + max((d for _, d in parts), default=0)
            if depth > MAX_YAML_DEPTH:
                raise _BeyondBound(
                    problem=f"nested {depth} levels deep with its aliases (*name) expanded; "
                    f"a scenario file nests at most {MAX_YAML_DEPTH}",
                    problem_mark=node.start_mark,
                )
            if nodes > MAX_YAML_NODES:
                raise _BeyondBound(
                    problem=f"this part stands for {nodes:,} YAML nodes, its aliases (*name) expanded; "
                    f"a scenario file has at most {MAX_YAML_NODES:,}",
                    problem_mark=node.start_mark,
                )
            measured[id(node)] = (nodes, depth)
        elif id(node) in open_nodes:
            raise _BeyondBound(
                problem="an alias (*name) inside the node it names", problem_mark=node.start_mark
            )
        elif id(node) not in measured:
            open_nodes.add(id(node))
            pending.append((node, True))
            pending += [(child, False) for child in _children(node)]


def _check_duplicates(root: yaml.Node, file: str) -> None:
    """A key given twice in one mapping is an error (YAML loaders keep the last one silently). Each
    node is looked at once, however many aliases name it."""
    seen_nodes: set[int] = set()
    pending = [root]
    while pending:
        node = pending.pop()
        if id(node) in seen_nodes:
            continue
        seen_nodes.add(id(node))
        if isinstance(node, yaml.MappingNode):
            keys: set[str] = set()
            for key, _ in node.value:
                if isinstance(key, yaml.ScalarNode):
                    if key.value in keys:
                        raise ScenarioFileError(f"{file}:{key.start_mark.line + 1}: {key.value}: given twice")
                    keys.add(key.value)
        pending += reversed(_children(node))


def _check_first_key(root: yaml.MappingNode, file: str) -> None:
    first = root.value[0][0] if root.value else None
    if not isinstance(first, yaml.ScalarNode) or first.value != "acres_scenario":
        at = first.start_mark.line + 1 if first is not None else 1
        raise ScenarioFileError(
            f"{file}:{at}: the first key must be acres_scenario (the format's version, {FORMAT_VERSION})"
        )


def _excerpt(node: yaml.Node) -> str:
    """A node's text as an error quotes it: at most 40 characters."""
    text = str(node.value) if isinstance(node, yaml.ScalarNode) else node.tag
    return repr(text if len(text) <= 40 else f"{text[:37]}...")


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
