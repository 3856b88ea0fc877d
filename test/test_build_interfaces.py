"""tools/build_interfaces.py: which pins force a rebuild of the interface packages, and the order
and concurrency of the builds."""

from __future__ import annotations

import sys
import sysconfig
import threading
from pathlib import Path
from types import ModuleType

import pytest
from tool_scripts import tool_module

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def build_interfaces() -> ModuleType:
    return tool_module("build_interfaces")


@pytest.fixture
def prefix(tmp_path: Path) -> Path:
    index = tmp_path / "prefix" / "share" / "ament_index" / "resource_index" / "packages"
    index.mkdir(parents=True)
    (index / "std_msgs").touch()
    return tmp_path / "prefix"


def _pins(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "constraints.txt"
    path.write_text(text)
    return path


def test_build_pins_keep_ros_packages_and_build_tools_only(build_interfaces, prefix, tmp_path):
    pins = _pins(
        tmp_path,
        "# comment==1\nstd_msgs==5.3.6\nros-jazzy-rclpy==7.1.6\nnumpy==2.4.6\nmcap==1.6.0\npytest==9.2.0\n",
    )
    assert build_interfaces.build_pins([pins], prefix) == [
        "numpy==2.4.6",
        "ros-jazzy-rclpy==7.1.6",
        "std_msgs==5.3.6",
    ]


def test_fingerprint_ignores_a_test_library_and_follows_a_ros_pin(build_interfaces, prefix, tmp_path):
    package = build_interfaces.InterfacePackage(name="pkg", path=ROOT / "interfaces" / "can_msgs", depends=())

    def print_of(text: str, generators: tuple[str, ...] = build_interfaces.RCLPY_GENERATORS) -> str:
        return build_interfaces.fingerprint(
            package, build_interfaces.build_pins([_pins(tmp_path, text)], prefix), [], generators
        )

    base = print_of("std_msgs==5.3.6\n")
    assert print_of("std_msgs==5.3.6\nmcap==1.6.0\n") == base
    assert print_of("std_msgs==5.3.7\n") != base
    assert print_of("std_msgs==5.3.6\nnumpy==2.4.6\n") != base
    assert print_of("std_msgs==5.3.6\n", generators=()) != base  # --generators all rebuilds


def test_every_interface_package_asks_for_the_generator_list(build_interfaces):
    # Without the filter in its CMakeLists.txt a package would run the C++ generators too.
    for manifest in (ROOT / "interfaces").glob("*/CMakeLists.txt"):
        text = manifest.read_text()
        assert "ACRES_ROSIDL_GENERATORS" in text, manifest
        assert text.index("ACRES_ROSIDL_GENERATORS") < text.index("rosidl_generate_interfaces("), manifest


def _package(build_interfaces, tmp_path: Path, name: str, definitions: int, depends: tuple[str, ...] = ()):
    path = tmp_path / name
    (path / "msg").mkdir(parents=True)
    for index in range(definitions):
        (path / "msg" / f"M{index}.msg").write_text("int32 x\n")
    return build_interfaces.InterfacePackage(name=name, path=path, depends=depends)


def test_packages_build_two_at_a_time_each_after_those_it_depends_on(build_interfaces, tmp_path):
    packages = [
        _package(build_interfaces, tmp_path, "small", 1),
        _package(build_interfaces, tmp_path, "after_big", 9, depends=("big", "std_msgs")),
        _package(build_interfaces, tmp_path, "big", 5),
        _package(build_interfaces, tmp_path, "middle", 3),
    ]
    events: list[tuple[str, str]] = []
    lock = threading.Lock()
    together = threading.Barrier(2, timeout=30)  # the first two builds wait for each other
    running = 0
    most = 0

    def build(package) -> None:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
            events.append(("start", package.name))
        if package.name in ("big", "middle"):
            together.wait()  # BrokenBarrierError unless both run at once
        with lock:
            running -= 1
            events.append(("end", package.name))

    build_interfaces.build_concurrently(packages, build, 2)
    starts = [name for kind, name in events if kind == "start"]
    assert sorted(starts) == ["after_big", "big", "middle", "small"]
    assert starts[:2] == ["big", "middle"] or starts[:2] == ["middle", "big"]  # most definitions first
    assert events.index(("end", "big")) < events.index(("start", "after_big"))
    assert most == 2  # never more than the two lanes


def test_a_failed_build_ends_the_run(build_interfaces, tmp_path):
    def build(package) -> None:
        raise SystemExit(f"build_interfaces: {package.name}: failed")

    with pytest.raises(SystemExit, match="lonely: failed"):
        build_interfaces.build_concurrently([_package(build_interfaces, tmp_path, "lonely", 1)], build, 2)


def test_an_installed_package_s_python_is_compiled_to_bytecode(build_interfaces, tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")  # as in many containers: imports would not save it
    prefix = tmp_path / "venv"
    purelib = Path(sysconfig.get_paths(vars={"base": str(prefix), "platbase": str(prefix)})["purelib"])
    (purelib / "pkg" / "msg").mkdir(parents=True)
    (purelib / "pkg" / "msg" / "_frame.py").write_text("class Frame:\n    pass\n")
    build_interfaces.compile_python(prefix, "pkg")
    assert [p.name for p in (purelib / "pkg" / "msg" / "__pycache__").iterdir()] == [
        f"_frame.{sys.implementation.cache_tag}.pyc"
    ]
    (purelib / "pkg" / "msg" / "_broken.py").write_text("def (:\n")
    with pytest.raises(SystemExit, match="pkg: its Python modules do not compile"):
        build_interfaces.compile_python(prefix, "pkg")
