"""A cache of built interface packages shared by clones and environments, as pip's wheel cache is
for the dependencies: a package built once on a machine is restored, not built, in the next clone.

An entry is the package's installed files (those of its cmake install manifest), in a tar file
named after the package and a key: the package's build fingerprint (its files, the pins, the
generators, its dependencies, the Python) and what else the build saw of the machine (its platform,
the prefix paths, the C and C++ compilers, each by its path and the version it reports). The
installed files name the install prefix in a few text files (the ament index's parent prefix path,
local_setup.sh, an exported cmake file); those are stored with a placeholder and get the new prefix
when restored. A package whose binary files name the prefix is not stored. Entries are written
whole or not at all (a temporary file, then a rename); a damaged one is deleted and the package
built. Only the newest KEEP_PER_PACKAGE entries of a package are kept.

ACRES_INTERFACE_CACHE: the cache's directory, or ``off``; by default
``$XDG_CACHE_HOME/acres_bridge/interfaces`` (``~/.cache/acres_bridge/interfaces``).
"""

from __future__ import annotations

import hashlib
import io
import os
import platform
import shutil
import subprocess
import sysconfig
import tarfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

__all__ = ["KEEP_PER_PACKAGE", "PLACEHOLDER", "InterfaceCache", "compiler_identity", "default_cache_dir"]

PLACEHOLDER = b"@ACRES_INTERFACE_PREFIX@"
KEEP_PER_PACKAGE = 3
CACHE_VARIABLE = "ACRES_INTERFACE_CACHE"


def default_cache_dir() -> Path | None:
    """The cache's directory from the environment; None when it is turned off."""
    value = os.environ.get(CACHE_VARIABLE, "")
    if value == "off":
        return None
    if value:
        return Path(value)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "acres_bridge" / "interfaces"


def compiler_identity(command: str) -> str:
    """A compiler as a build would find it: its resolved path and the first line of its
    ``--version`` ("" where none is found). An upgrade in place keeps the path and changes the
    version, so a package built by the old one is not restored for the new."""
    found = shutil.which(command)
    if found is None:
        return ""
    path = os.path.realpath(found)
    try:
        printed = subprocess.run(
            [path, "--version"], capture_output=True, text=True, timeout=10, check=False
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        printed = ""
    return f"{path} {printed.splitlines()[0] if printed else ''}"


class CacheError(Exception):
    """An entry that cannot be stored or restored, with the reason."""


def _inside(name: str) -> PurePosixPath:
    """A member's path, relative and without '..': where it lands inside the prefix."""
    path = PurePosixPath(name)
    if path.is_absolute() or ".." in path.parts or not path.parts:
        raise CacheError(f"member {name!r} points outside the prefix")
    return path


@dataclass(frozen=True)
class InterfaceCache:
    """The entries under ``root`` for builds installed into ``prefix``."""

    root: Path
    prefix: Path

    def key(self, fingerprint: str) -> str:
        """The entry key of a package with this build fingerprint, built on this machine."""
        digest = hashlib.sha256(fingerprint.encode())
        prefix = str(self.prefix)
        for variable in ("AMENT_PREFIX_PATH", "CMAKE_PREFIX_PATH"):
            digest.update(f"{variable}={os.environ.get(variable, '').replace(prefix, '@')}\n".encode())
        for variable, default in (("CC", "cc"), ("CXX", "c++")):
            digest.update(f"{variable}={compiler_identity(os.environ.get(variable, default))}\n".encode())
        digest.update(
            f"{platform.system()} {platform.machine()} {sysconfig.get_paths()['include']}\n".encode()
        )
        return digest.hexdigest()

    def entry(self, name: str, key: str) -> Path:
        return self.root / f"{name}-{key}.tar"

    def store(self, name: str, key: str, manifest: Path) -> None:
        """Store the files that cmake installed (``manifest``: its install_manifest.txt)."""
        prefix_bytes = str(self.prefix).encode()
        files = [Path(line) for line in manifest.read_text().splitlines() if line.strip()]
        self.root.mkdir(parents=True, exist_ok=True)
        partial = self.root / f".{name}-{key}.{os.getpid()}.partial"
        try:
            with tarfile.open(partial, "w") as archive:
                for path in files:
                    try:
                        relative = path.relative_to(self.prefix)
                    except ValueError:
                        raise CacheError(f"{path} is installed outside the prefix") from None
                    info = archive.gettarinfo(str(path), arcname=str(relative))
                    if info.issym():
                        archive.addfile(info)
                        continue
                    if not info.isfile():
                        raise CacheError(f"{relative} is neither a file nor a symbolic link")
                    data = path.read_bytes()
                    if prefix_bytes in data:
                        if b"\0" in data:
                            raise CacheError(f"{relative} is binary and names the prefix")
                        data = data.replace(prefix_bytes, PLACEHOLDER)
                    info.size = len(data)
                    archive.addfile(info, io.BytesIO(data))
            partial.replace(self.entry(name, key))
        finally:
            partial.unlink(missing_ok=True)
        self._prune(name)

    def restore(self, name: str, key: str) -> bool:
        """Install the package's entry into the prefix; False when there is none. A damaged entry
        is deleted (CacheError says why); the files it wrote before are the build's to overwrite."""
        path = self.entry(name, key)
        if not path.is_file():
            return False
        prefix_bytes = str(self.prefix).encode()
        try:
            with tarfile.open(path) as archive:
                members = archive.getmembers()
                # Every member checked before any is written.
                targets = [self.prefix / _inside(member.name) for member in members]
                for member in members:
                    if member.issym():
                        _inside(member.linkname)  # a link stays beside its directory's files
                    elif not member.isfile():
                        raise CacheError(f"member {member.name!r} is neither a file nor a symbolic link")
                for member, target in zip(members, targets, strict=True):
                    target.parent.mkdir(parents=True, exist_ok=True)
                    if target.is_symlink() or target.exists():
                        target.unlink()
                    if member.issym():
                        target.symlink_to(member.linkname)
                        continue
                    source = archive.extractfile(member)
                    if source is None:
                        raise CacheError(f"member {member.name!r} has no data")
                    target.write_bytes(source.read().replace(PLACEHOLDER, prefix_bytes))
                    target.chmod(member.mode & 0o777)
        except (tarfile.TarError, OSError, EOFError, CacheError) as error:
            path.unlink(missing_ok=True)
            raise CacheError(f"{path.name}: {error}") from error
        os.utime(path)  # the newest use: the last to be pruned
        return True

    def _prune(self, name: str) -> None:
        """Keep the package's newest KEEP_PER_PACKAGE entries."""
        entries = sorted(self.root.glob(f"{name}-*.tar"), key=lambda p: p.stat().st_mtime, reverse=True)
        for stale in entries[KEEP_PER_PACKAGE:]:
            stale.unlink(missing_ok=True)
