"""Put a package's executables where `ros2 run` and launch_ros look for them: <prefix>/lib/<pkg>/.

colcon installs an ament_python package's console scripts there (setup.cfg's install_scripts);
`pip install .` builds a wheel and puts them in <prefix>/bin only. This links each console script
of the installed distribution from <prefix>/lib/<pkg>/<name> to <prefix>/bin/<name>, so both
install paths give the same layout. Links of scripts the package no longer has are removed.

Run it with the interpreter of the environment the package is installed in, after each
``pip install`` of an ament_python package (acres_bridge's set-up does it for acres_bridge):

    python -m acres_bridge.tools.link_executables --package my_stack
"""

from __future__ import annotations

import argparse
import sys
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path


def console_scripts(package: str) -> list[str]:
    """The names of the package's console scripts, as its installed metadata lists them."""
    try:
        entry_points = distribution(package).entry_points
    except PackageNotFoundError:
        raise SystemExit(f"link_executables: {package} is not installed in {sys.prefix}") from None
    return sorted(ep.name for ep in entry_points if ep.group == "console_scripts")


def link(package: str, prefix: Path) -> list[str]:
    """Make <prefix>/lib/<package>/<name> a link to <prefix>/bin/<name> for each script; the names."""
    names = console_scripts(package)
    libexec = prefix / "lib" / package
    libexec.mkdir(parents=True, exist_ok=True)
    for stale in libexec.iterdir():
        if stale.is_symlink() and stale.name not in names:
            stale.unlink()
    for name in names:
        script = prefix / "bin" / name
        if not script.exists():
            raise SystemExit(f"link_executables: {script} does not exist; is {package} installed here?")
        target = libexec / name
        if target.is_symlink() or target.exists():
            target.unlink()
        target.symlink_to(Path("..", "..", "bin", name))
    return names


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--package", default="acres_bridge")
    parser.add_argument("--prefix", type=Path, default=Path(sys.prefix))
    args = parser.parse_args(argv)
    names = link(args.package, args.prefix)
    print(f"link_executables: {len(names)} executables of {args.package} in {args.prefix}/lib/{args.package}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
