"""tools/interface_cache.py: a built interface package stored from one prefix is restored into
another with the same files, links and modes and the new prefix in its text files; what cannot be
stored is refused whole, and a damaged or hostile entry is dropped without writing outside the
prefix."""

from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path
from types import ModuleType

import pytest
from tool_scripts import tool_module

KEY = "0" * 64


@pytest.fixture(scope="module")
def cache_module() -> ModuleType:
    return tool_module("interface_cache")


def _installed(prefix: Path) -> Path:
    """A package's installed files in ``prefix`` as cmake lists them: its manifest."""
    share = prefix / "share" / "pkg"
    lib = prefix / "lib"
    share.mkdir(parents=True)
    lib.mkdir(parents=True)
    (share / "local_setup.sh").write_text(
        f'AMENT_CURRENT_PREFIX="{prefix}"\nexport PATH="{prefix}/bin:$PATH"\n'
    )
    (share / "pkg.msg").write_text("int32 data\n")
    (lib / "libpkg.so").write_bytes(b"\x7fELF\x00\x01binary without the path")
    (lib / "libpkg.so").chmod(0o755)
    (lib / "libpkg.so.1").symlink_to("libpkg.so")
    files = [share / "local_setup.sh", share / "pkg.msg", lib / "libpkg.so", lib / "libpkg.so.1"]
    manifest = prefix.parent / f"{prefix.name}_install_manifest.txt"
    manifest.write_text("".join(f"{f}\n" for f in files))
    return manifest


def test_an_entry_is_restored_into_another_prefix_with_that_prefix(cache_module, tmp_path):
    built = tmp_path / "clone_a" / ".venv"
    manifest = _installed(built)
    cache_dir = tmp_path / "cache"
    cache_module.InterfaceCache(cache_dir, built).store("pkg", KEY, manifest)
    other = tmp_path / "clone_b" / ".venv"
    other.mkdir(parents=True)

    assert cache_module.InterfaceCache(cache_dir, other).restore("pkg", KEY) is True

    setup = (other / "share" / "pkg" / "local_setup.sh").read_text()
    assert setup == f'AMENT_CURRENT_PREFIX="{other}"\nexport PATH="{other}/bin:$PATH"\n'
    assert (other / "share" / "pkg" / "pkg.msg").read_text() == "int32 data\n"
    assert (other / "lib" / "libpkg.so").read_bytes() == (built / "lib" / "libpkg.so").read_bytes()
    assert (other / "lib" / "libpkg.so").stat().st_mode & 0o777 == 0o755
    assert os.readlink(other / "lib" / "libpkg.so.1") == "libpkg.so"
    assert list(cache_dir.iterdir()) == [cache_dir / f"pkg-{KEY}.tar"]


def test_no_entry_is_no_restore(cache_module, tmp_path):
    assert cache_module.InterfaceCache(tmp_path / "cache", tmp_path / "prefix").restore("pkg", KEY) is False


def test_a_binary_that_names_the_prefix_is_not_stored(cache_module, tmp_path):
    prefix = tmp_path / "venv"
    manifest = _installed(prefix)
    (prefix / "lib" / "libpkg.so").write_bytes(b"\x7fELF\x00" + str(prefix).encode())
    cache_dir = tmp_path / "cache"
    with pytest.raises(cache_module.CacheError, match=r"libpkg\.so is binary and names the prefix"):
        cache_module.InterfaceCache(cache_dir, prefix).store("pkg", KEY, manifest)
    assert list(cache_dir.iterdir()) == []  # no entry, no partial file


def test_a_file_installed_outside_the_prefix_is_not_stored(cache_module, tmp_path):
    prefix = tmp_path / "venv"
    manifest = _installed(prefix)
    stray = tmp_path / "elsewhere.txt"
    stray.write_text("x")
    manifest.write_text(manifest.read_text() + f"{stray}\n")
    with pytest.raises(cache_module.CacheError, match="outside the prefix"):
        cache_module.InterfaceCache(tmp_path / "cache", prefix).store("pkg", KEY, manifest)


def test_a_damaged_entry_is_deleted_and_reported(cache_module, tmp_path):
    prefix = tmp_path / "venv"
    manifest = _installed(prefix)
    cache = cache_module.InterfaceCache(tmp_path / "cache", prefix)
    cache.store("pkg", KEY, manifest)
    entry = cache.entry("pkg", KEY)
    entry.write_bytes(entry.read_bytes()[:700])  # cut in the middle of a member
    with pytest.raises(cache_module.CacheError, match=f"pkg-{KEY}.tar"):
        cache.restore("pkg", KEY)
    assert not entry.exists()
    assert cache.restore("pkg", KEY) is False


@pytest.mark.parametrize(
    ("member", "link"),
    [("../../escaped.txt", None), ("/tmp/absolute.txt", None), ("share/link", "../../../outside")],
)
def test_an_entry_that_would_write_outside_the_prefix_writes_nothing(cache_module, tmp_path, member, link):
    cache_dir = tmp_path / "cache"
    cache_dir.mkdir()
    with tarfile.open(cache_dir / f"pkg-{KEY}.tar", "w") as archive:
        good = tarfile.TarInfo("share/pkg/good.txt")
        good.size = 2
        archive.addfile(good, io.BytesIO(b"ok"))
        info = tarfile.TarInfo(member)
        if link is None:
            info.size = 4
            archive.addfile(info, io.BytesIO(b"evil"))
        else:
            info.type = tarfile.SYMTYPE
            info.linkname = link
            archive.addfile(info)
    prefix = tmp_path / "a" / "b" / "venv"
    prefix.mkdir(parents=True)
    with pytest.raises(cache_module.CacheError, match="outside"):
        cache_module.InterfaceCache(cache_dir, prefix).restore("pkg", KEY)
    assert not (prefix / "share").exists()
    assert not (tmp_path / "a" / "escaped.txt").exists()
    assert not (cache_dir / f"pkg-{KEY}.tar").exists()


def test_a_package_keeps_its_newest_entries_only(cache_module, tmp_path):
    prefix = tmp_path / "venv"
    manifest = _installed(prefix)
    cache = cache_module.InterfaceCache(tmp_path / "cache", prefix)
    keys = [f"{n:064x}" for n in range(cache_module.KEEP_PER_PACKAGE + 2)]
    for age, key in enumerate(keys):
        cache.store("pkg", key, manifest)
        os.utime(cache.entry("pkg", key), (1000 + age, 1000 + age))
    cache.store("pkg", keys[-1], manifest)  # prunes
    kept = sorted(p.name for p in (tmp_path / "cache").iterdir())
    assert kept == sorted(f"pkg-{key}.tar" for key in keys[-cache_module.KEEP_PER_PACKAGE :])


def test_the_key_follows_the_fingerprint_and_the_machine_not_the_prefix(cache_module, tmp_path, monkeypatch):
    a = cache_module.InterfaceCache(tmp_path / "cache", Path("/clone_a/.venv"))
    b = cache_module.InterfaceCache(tmp_path / "cache", Path("/clone_b/.venv"))
    monkeypatch.setenv("AMENT_PREFIX_PATH", "/clone_a/.venv")
    key_a = a.key("print")
    monkeypatch.setenv("AMENT_PREFIX_PATH", "/clone_b/.venv")
    assert b.key("print") == key_a
    assert b.key("other print") != key_a
    monkeypatch.setenv("AMENT_PREFIX_PATH", "/clone_b/.venv:/opt/ros/jazzy")
    assert b.key("print") != key_a


def test_the_cache_directory_comes_from_the_environment(cache_module, tmp_path, monkeypatch):
    monkeypatch.setenv("ACRES_INTERFACE_CACHE", "off")
    assert cache_module.default_cache_dir() is None
    monkeypatch.setenv("ACRES_INTERFACE_CACHE", str(tmp_path / "mine"))
    assert cache_module.default_cache_dir() == tmp_path / "mine"
    monkeypatch.delenv("ACRES_INTERFACE_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_module.default_cache_dir() == tmp_path / "xdg" / "acres_bridge" / "interfaces"


def _compiler(folder: Path, version: str) -> Path:
    """A stand-in compiler that only answers --version."""
    script = folder / "fake-cc"
    script.write_text(f"#!/bin/sh\necho '{version}'\n")
    script.chmod(0o755)
    return script


def test_the_key_follows_the_compilers_version_at_the_same_path(cache_module, tmp_path, monkeypatch):
    cache = cache_module.InterfaceCache(tmp_path / "cache", Path("/clone/.venv"))
    compiler = _compiler(tmp_path, "cc (Debian 12.2.0-14) 12.2.0")
    monkeypatch.setenv("CC", str(compiler))
    before = cache.key("print")
    assert cache.key("print") == before
    _compiler(tmp_path, "cc (Debian 13.1.0-1) 13.1.0")  # upgraded in place
    assert cache.key("print") != before
    monkeypatch.setenv("CXX", str(compiler))
    with_cxx = cache.key("print")
    _compiler(tmp_path, "cc (Debian 14.0.0-1) 14.0.0")
    assert cache.key("print") not in (before, with_cxx)
    assert cache_module.compiler_identity(str(tmp_path / "no-such-compiler")) == ""
