"""The package's layers, read from the imports of every source file: one dependency direction.

    wire, geo          the protocol's bytes and the shared geometry: no ROS at all
    convert            pure conversions: ROS message types, no node
    ingest, nodes ...  the ROS wiring
    acres_sim          the reference simulator: imports the bridge's wire, geo, tools, msg_profiles,
                       errors, pace line and rate-limited log, nothing else of it; the bridge never imports it

A private name (one with a leading underscore) stays in its module; a private module stays in its
package.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("acres_bridge", "acres_sim", "bench", "tools", "examples", "launch")
ROS_CLIENT = ("rclpy",)
SIM_MAY_IMPORT = (
    "acres_bridge.wire",
    "acres_bridge.geo",
    "acres_bridge.tools",
    "acres_bridge.msg_profiles",
    "acres_bridge.errors",
    "acres_bridge.pace",  # the pace line the simulator prints and acres_demo reads back
    "acres_bridge.rate_limited_log",  # the one policy for warnings about repeated bad input
)


@dataclass(frozen=True)
class Import:
    path: Path  # the importing file, relative to the project
    module: str  # the imported module
    names: tuple[str, ...]  # the names taken from it (empty for `import module`)
    line: int

    def __str__(self) -> str:
        taken = f" ({', '.join(self.names)})" if self.names else ""
        return f"{self.path}:{self.line}: {self.module}{taken}"


def _module_of(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports() -> Iterator[Import]:
    for folder in SOURCES:
        for path in sorted((ROOT / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            here = _module_of(path)
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    for alias in node.names:
                        yield Import(path.relative_to(ROOT), alias.name, (), node.lineno)
                elif isinstance(node, ast.ImportFrom) and node.module is not None:
                    module = node.module
                    if node.level:  # relative: resolve against this module's package
                        base = (
                            here.split(".")[: -node.level] if path.name != "__init__.py" else here.split(".")
                        )
                        module = ".".join([*base, module])
                    names = tuple(alias.name for alias in node.names)
                    yield Import(path.relative_to(ROOT), module, names, node.lineno)


IMPORTS = tuple(_imports())


def _in(imp: Import, *packages: str) -> bool:
    return any(imp.path.parts[: len(p.split("/"))] == tuple(p.split("/")) for p in packages)


def _is(module: str, *prefixes: str) -> bool:
    return any(module == prefix or module.startswith(prefix + ".") for prefix in prefixes)


def test_the_files_are_read() -> None:
    assert len({imp.path for imp in IMPORTS}) > 100
    assert any(_is(imp.module, "rclpy") for imp in IMPORTS)  # the walk sees what the rules are about


def test_the_bridge_never_imports_the_simulator() -> None:
    offending = [str(imp) for imp in IMPORTS if _in(imp, "acres_bridge") and _is(imp.module, "acres_sim")]
    assert offending == []


def test_the_simulator_imports_only_the_shared_parts_of_the_bridge() -> None:
    offending = [
        str(imp)
        for imp in IMPORTS
        if _in(imp, "acres_sim") and _is(imp.module, "acres_bridge") and not _is(imp.module, *SIM_MAY_IMPORT)
    ]
    assert offending == []


@pytest.mark.parametrize("layer", ["acres_bridge/wire", "acres_bridge/geo"])
def test_the_protocol_and_the_geometry_need_no_ros(layer: str) -> None:
    offending = [
        str(imp)
        for imp in IMPORTS
        if _in(imp, layer)
        and (
            _is(imp.module, *ROS_CLIENT)
            or imp.module.endswith("_msgs.msg")
            or imp.module.endswith("interfaces.msg")
        )
    ]
    assert offending == []


@pytest.mark.parametrize("layer", ["acres_bridge/wire", "acres_bridge/geo", "acres_bridge/convert"])
def test_the_pure_layers_import_no_node_and_nothing_above_them(layer: str) -> None:
    above = ("acres_bridge.ingest", "acres_bridge.nodes", "acres_bridge.other", "acres_bridge.container")
    offending = [str(imp) for imp in IMPORTS if _in(imp, layer) and (_is(imp.module, "rclpy.node", *above))]
    assert offending == []


def test_no_private_name_leaves_its_module() -> None:
    offending = []
    for imp in IMPORTS:
        for name in imp.names:
            if not name.startswith("_") or name.startswith("__"):
                continue
            private_module = (ROOT / imp.module.replace(".", "/") / f"{name}.py").exists()
            importer_package = _module_of(ROOT / imp.path).rsplit(".", 1)[0]
            if private_module and imp.module == importer_package:
                continue  # a private module of the importer's own package
            offending.append(str(imp))
    assert offending == []


def test_only_the_simulator_s_command_line_imports_its_server() -> None:
    """acres_sim.server is the network side: the world, the sensors and the vehicles never reach it."""
    offending = [
        str(imp)
        for imp in IMPORTS
        if _in(imp, "acres_sim")
        and not _in(imp, "acres_sim/server", "acres_sim/cli.py")
        and _is(imp.module, "acres_sim.server")
    ]
    assert offending == []


def test_the_vehicles_import_nothing_of_the_simulator_but_each_other_its_clock_and_errors() -> None:
    """acres_sim.vehicles models what an agent is and how it moves: no scene, sensor, world or server."""
    offending = [
        str(imp)
        for imp in IMPORTS
        if _in(imp, "acres_sim/vehicles")
        and _is(imp.module, "acres_sim")
        and not _is(imp.module, "acres_sim.vehicles", "acres_sim.clock", "acres_sim.errors")
    ]
    assert offending == []


def test_the_sensors_import_only_the_vehicles_clock_and_errors_of_the_simulator() -> None:
    """acres_sim.sensors sees the scene from a vehicle's mount: no world, episode or server."""
    allowed = ("acres_sim.sensors", "acres_sim.vehicles", "acres_sim.clock", "acres_sim.errors")
    offending = [
        str(imp)
        for imp in IMPORTS
        if _in(imp, "acres_sim/sensors") and _is(imp.module, "acres_sim") and not _is(imp.module, *allowed)
    ]
    assert offending == []


def test_only_the_simulator_s_command_line_imports_its_episode_log() -> None:
    """acres_sim.episode observes the world; the world, its models and the server never reach it."""
    offending = [
        str(imp)
        for imp in IMPORTS
        if _in(imp, "acres_sim")
        and not _in(imp, "acres_sim/episode", "acres_sim/cli.py")
        and _is(imp.module, "acres_sim.episode")
    ]
    assert offending == []


def test_the_world_reaches_neither_the_episode_log_nor_the_server() -> None:
    offending = [
        str(imp)
        for imp in IMPORTS
        if _in(imp, "acres_sim/world") and _is(imp.module, "acres_sim.episode", "acres_sim.server")
    ]
    assert offending == []
