#!/usr/bin/env python3
"""Build the interface packages under interfaces/ into a prefix, each only when it is needed.

A package is skipped when the environment already provides it (a ROS 2 distribution on
AMENT_PREFIX_PATH outside the target prefix: its definitions win), and when it was built into
the prefix before from the same definitions, pins and dependencies (a fingerprint stored in
its installed share directory). Anything else is configured, compiled and installed with
cmake, in dependency order, two packages at a time where neither depends on the other.

A package built on this machine before, in any clone or environment, is restored from the
interface cache instead (tools/interface_cache.py; ACRES_INTERFACE_CACHE=off or --no-cache turns
it off).

Only the generators that rclpy uses run (RCLPY_GENERATORS: the type descriptions, the C structs,
the C type supports of Fast DDS and of introspection with their dispatch, and the Python
bindings); the C++ structs and type supports are left out, which roughly halves the build
(`--generators all` builds them too; the colcon path always does).

Run it with the interpreter of the target environment: its sysconfig and numpy give the
include paths that the PyPI wheels' exported cmake files must point at.
"""

from __future__ import annotations

import argparse
import compileall
import hashlib
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path

from interface_cache import CacheError, InterfaceCache, default_cache_dir

ROOT = Path(__file__).resolve().parent.parent
INTERFACES = ROOT / "interfaces"
FINGERPRINT_NAME = "acres_build_fingerprint"

# Include paths of the machine that built the PyPI wheels, baked into their exported cmake files.
WHEEL_BUILD_PYTHON_INCLUDE = "/opt/python/cp311-cp311/include/python3.11"
WHEEL_BUILD_NUMPY_INCLUDE = "/opt/python/cp311-cp311/lib/python3.11/site-packages/numpy/_core/include"
# Python packages that take part in building an interface package besides the ROS 2 ones.
BUILD_TOOLS = (
    "catkin-pkg",
    "cmake",
    "empy",
    "lark",
    "lark-parser",
    "numpy",
    "packaging",
    "pyparsing",
    "setuptools",
    "wheel",
)


# What rclpy over rmw_fastrtps_cpp needs of an interface package, in the order rosidl runs them.
RCLPY_GENERATORS = (
    "rosidl_generator_type_description",
    "rosidl_generator_c",
    "rosidl_typesupport_fastrtps_c",
    "rosidl_typesupport_introspection_c",
    "rosidl_typesupport_c",
    "rosidl_generator_py",
)


@dataclass(frozen=True)
class InterfacePackage:
    """One interface package of this tree and the packages it depends on."""

    name: str
    path: Path
    depends: tuple[str, ...]


def discover() -> dict[str, InterfacePackage]:
    """Read every interfaces/*/package.xml."""
    found: dict[str, InterfacePackage] = {}
    for manifest in sorted(INTERFACES.glob("*/package.xml")):
        root = ET.parse(manifest).getroot()
        name = root.findtext("name", "").strip()
        depends = tuple(
            element.text.strip()
            for tag in ("depend", "build_depend")
            for element in root.findall(tag)
            if element.text
        )
        found[name] = InterfacePackage(name=name, path=manifest.parent, depends=depends)
    return found


def build_order(packages: dict[str, InterfacePackage]) -> list[InterfacePackage]:
    """Packages sorted so that each comes after those of this tree it depends on."""
    ordered: list[InterfacePackage] = []
    visiting: set[str] = set()

    def visit(name: str) -> None:
        if any(p.name == name for p in ordered):
            return
        if name in visiting:
            raise SystemExit(f"build_interfaces: dependency cycle through {name}")
        visiting.add(name)
        for dep in packages[name].depends:
            if dep in packages:
                visit(dep)
        visiting.discard(name)
        ordered.append(packages[name])

    for name in sorted(packages):
        visit(name)
    return ordered


def provider_outside(name: str, prefix: Path) -> Path | None:
    """The prefix on AMENT_PREFIX_PATH, other than ours, that already has this package."""
    ours = prefix.resolve()
    for entry in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep):
        if not entry:
            continue
        resolved = Path(entry).resolve()
        if resolved == ours or ours in resolved.parents:  # colcon installs each package below the prefix
            continue
        if (Path(entry) / "share" / "ament_index" / "resource_index" / "packages" / name).exists():
            return Path(entry)
    return None


def _normalized(name: str) -> str:
    """A distribution name as PEP 503 compares them: lower case, runs of -_. as one -."""
    return re.sub(r"[-_.]+", "-", name).lower()


def build_pins(pin_files: list[Path], prefix: Path) -> list[str]:
    """The pins that can change what the build produces, sorted.

    Those of the ROS 2 packages (ros-* wheels and the packages in the prefix's ament index) and of
    the build tools;
    a pin of a test or run-time library elsewhere (pytest, mcap, ...) does not force a rebuild.
    """
    index = prefix / "share" / "ament_index" / "resource_index" / "packages"
    relevant = {_normalized(p.name) for p in index.iterdir()} if index.is_dir() else set()
    relevant |= {_normalized(name) for name in BUILD_TOOLS}
    pins = []
    for path in pin_files:
        lines = path.read_text().splitlines() if path.exists() else []
        for line in lines:
            name, separator, _ = line.strip().partition("==")
            key = _normalized(name)
            if separator and not name.startswith("#") and (key.startswith("ros-") or key in relevant):
                pins.append(line.strip())
    return sorted(pins)


def fingerprint(
    package: InterfacePackage, pins: list[str], dependency_prints: list[str], generators: tuple[str, ...]
) -> str:
    """A digest of the package's files, the build's pins, the generators that run and the
    fingerprints of its dependencies."""
    digest = hashlib.sha256()
    digest.update(("generators:" + ",".join(generators) + "\n").encode())
    for path in sorted(p for p in package.path.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(package.path)).encode())
        digest.update(path.read_bytes())
    for pin in pins:
        digest.update(pin.encode() + b"\n")
    for dependency_print in dependency_prints:
        digest.update(dependency_print.encode())
    digest.update(sys.version.encode())
    return digest.hexdigest()


def stamp_path(prefix: Path, name: str) -> Path:
    return prefix / "share" / name / FINGERPRINT_NAME


def fix_wheel_cmake_exports(prefix: Path) -> int:
    """Point the wheels' exported cmake files at this interpreter's include directories."""
    import numpy  # noqa: PLC0415  (the target environment's; --list-provided runs without it)

    replacements = {
        WHEEL_BUILD_PYTHON_INCLUDE: sysconfig.get_paths()["include"],
        WHEEL_BUILD_NUMPY_INCLUDE: numpy.get_include(),
    }
    changed = 0
    for export in prefix.glob("share/*/cmake/*Export.cmake"):
        text = export.read_text()
        new = text
        for old, replacement in replacements.items():
            new = new.replace(old, replacement)
        if new != text:
            export.write_text(new)
            changed += 1
    return changed


def cmake_build(
    package: InterfacePackage, prefix: Path, build_root: Path, jobs: int, generators: tuple[str, ...]
) -> None:
    """Configure, compile and install one package into the prefix, with only `generators` (all
    that are found when empty)."""
    build_dir = build_root / package.name
    env = dict(os.environ)
    env["AMENT_PREFIX_PATH"] = os.pathsep.join(
        p for p in (str(prefix), os.environ.get("AMENT_PREFIX_PATH", "")) if p
    )
    env["CMAKE_PREFIX_PATH"] = os.pathsep.join(
        p for p in (str(prefix), os.environ.get("CMAKE_PREFIX_PATH", "")) if p
    )
    env["PATH"] = os.pathsep.join((str(prefix / "bin"), env.get("PATH", "")))
    python = prefix / "bin" / "python"
    configure = [
        "cmake",
        "-S",
        str(package.path),
        "-B",
        str(build_dir),
        f"-DCMAKE_INSTALL_PREFIX={prefix}",
        f"-DPython3_EXECUTABLE={python if python.exists() else sys.executable}",
        "-DBUILD_TESTING=OFF",
        "-DCMAKE_BUILD_TYPE=Release",
    ]
    if generators:
        configure.append(f"-DACRES_ROSIDL_GENERATORS={';'.join(generators)}")
    (build_dir / "CMakeCache.txt").unlink(missing_ok=True)  # no generator list left from a run before
    for command in (
        configure,
        ["cmake", "--build", str(build_dir), "--parallel", str(jobs)],
        ["cmake", "--install", str(build_dir)],
    ):
        result = subprocess.run(  # noqa: PLW1510  (the return code is checked below)
            command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        if result.returncode != 0:
            sys.stderr.write(result.stdout[-20000:])
            raise SystemExit(f"build_interfaces: {package.name}: '{' '.join(command[:3])} ...' failed")


def compile_python(prefix: Path, name: str) -> None:
    """Compile the package's Python modules to bytecode, as pip does for what it installs: cmake
    installs the sources alone, and where PYTHONDONTWRITEBYTECODE is set every process that imports a
    message module would compile it again."""
    purelib = Path(sysconfig.get_paths(vars={"base": str(prefix), "platbase": str(prefix)})["purelib"])
    if (purelib / name).is_dir() and not compileall.compile_dir(purelib / name, quiet=1):
        raise SystemExit(f"build_interfaces: {name}: its Python modules do not compile")


def definition_count(package: InterfacePackage) -> int:
    """How many .msg, .srv and .action files the package has: what its build's length goes by."""
    return sum(1 for p in package.path.rglob("*") if p.suffix in (".msg", ".srv", ".action"))


def build_concurrently(
    packages: list[InterfacePackage], build: Callable[[InterfacePackage], None], lanes: int
) -> None:
    """Build `packages`, up to `lanes` at once, each once those of them it depends on are built;
    of those ready, the one with the most definitions first. A build's configure step and rosidl's
    generators run on one core, so two builds side by side keep two cores busy for longer."""
    waiting = sorted(packages, key=definition_count, reverse=True)
    names = {p.name for p in packages}
    built: set[str] = set()
    running: dict[Future[None], InterfacePackage] = {}
    with ThreadPoolExecutor(max_workers=max(1, lanes)) as pool:
        while waiting or running:
            for package in [p for p in waiting if all(d in built for d in p.depends if d in names)]:
                if len(running) >= max(1, lanes):
                    break
                waiting.remove(package)
                running[pool.submit(build, package)] = package
            if not running:
                raise SystemExit(
                    "build_interfaces: packages wait for each other: " + ", ".join(p.name for p in waiting)
                )
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                future.result()  # a failed build ends the run with its SystemExit
                built.add(running.pop(future).name)


def _restored(cache: InterfaceCache, name: str, key: str, say: Callable[[str], None]) -> bool:
    """Whether the package was restored from the cache; a damaged entry is said and dropped."""
    try:
        return cache.restore(name, key)
    except CacheError as error:
        say(f"build_interfaces: {name}: cache entry dropped ({error}), building")
        return False


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--prefix", type=Path, default=Path(sys.prefix), help="install prefix (default: this venv)"
    )
    parser.add_argument("--build-dir", type=Path, default=ROOT / "build" / "interfaces")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="compile jobs of one build")
    parser.add_argument(
        "--lanes", type=int, default=2, help="packages built at once (those that do not depend on each other)"
    )
    parser.add_argument(
        "--pins",
        type=Path,
        action="append",
        default=[ROOT / "constraints.txt"],
        help="pin files; a changed pin of a ROS 2 package or a build tool forces a rebuild "
        "(default: constraints.txt)",
    )
    parser.add_argument(
        "--generators",
        choices=("rclpy", "all"),
        default="rclpy",
        help="rclpy: only what rclpy uses (default); all: every rosidl generator found, C++ included",
    )
    parser.add_argument(
        "--cache",
        type=Path,
        default=default_cache_dir(),
        help="the interface cache's directory (default: $ACRES_INTERFACE_CACHE or "
        "~/.cache/acres_bridge/interfaces)",
    )
    parser.add_argument("--no-cache", action="store_true", help="build every stale package, store none")
    parser.add_argument(
        "--list-provided",
        action="store_true",
        help="print the packages the environment already provides, then exit",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    prefix: Path = args.prefix.resolve()

    packages = discover()
    ordered = build_order(packages)
    if args.list_provided:
        print(" ".join(p.name for p in ordered if provider_outside(p.name, prefix)))
        return 0

    generators = RCLPY_GENERATORS if args.generators == "rclpy" else ()
    fixed = fix_wheel_cmake_exports(prefix)
    if fixed:
        print(f"build_interfaces: pointed {fixed} exported cmake files at this interpreter")
    prints: dict[str, str] = {}
    pins = build_pins(args.pins, prefix)
    stale: list[InterfacePackage] = []
    for package in ordered:
        provider = provider_outside(package.name, prefix)
        if provider is not None:
            print(f"build_interfaces: {package.name}: provided by {provider}, not built")
            prints[package.name] = f"external:{provider}"
            continue
        wanted = fingerprint(package, pins, [prints[d] for d in package.depends if d in prints], generators)
        prints[package.name] = wanted
        stamp = stamp_path(prefix, package.name)
        if stamp.exists() and stamp.read_text().strip() == wanted:
            print(f"build_interfaces: {package.name}: up to date")
            continue
        stale.append(package)

    def say(line: str) -> None:  # one write a line: the builds run side by side
        sys.stdout.write(line + "\n")
        sys.stdout.flush()

    cache = None if args.no_cache or args.cache is None else InterfaceCache(args.cache.resolve(), prefix)

    def build(package: InterfacePackage) -> None:
        started = time.monotonic()
        key = cache.key(prints[package.name]) if cache is not None else ""
        if cache is not None and _restored(cache, package.name, key, say):
            say(f"build_interfaces: {package.name}: restored in {time.monotonic() - started:.1f} s")
        else:
            say(f"build_interfaces: {package.name}: building ...")
            cmake_build(package, prefix, args.build_dir, args.jobs, generators)
            say(f"build_interfaces: {package.name}: built in {time.monotonic() - started:.0f} s")
            if cache is not None:
                try:
                    cache.store(package.name, key, args.build_dir / package.name / "install_manifest.txt")
                except (CacheError, OSError) as error:
                    say(f"build_interfaces: {package.name}: not cached: {error}")
        compile_python(prefix, package.name)
        stamp = stamp_path(prefix, package.name)
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.write_text(prints[package.name] + "\n")

    build_concurrently(stale, build, args.lanes)
    return 0


if __name__ == "__main__":
    if shutil.which("cmake") is None:
        raise SystemExit("build_interfaces: cmake is not on PATH")
    raise SystemExit(main())
