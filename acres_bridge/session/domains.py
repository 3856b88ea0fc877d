"""DDS domains for isolated sessions: each live session on this machine holds one of its own.

A session leases a domain by taking an exclusive lock on the domain's file in a folder shared by
every process of the machine (``ACRES_DOMAIN_LOCKS``, default ``/tmp/acres_domains``). The lock is
the kernel's (``flock``): it is held while a file descriptor of the lease is open, the session's and
those its processes inherit (``DomainLease.fileno``), and released when the last of them closes,
however the processes end. So a crashed episode never keeps its domain, yet the domain is not leased
again while a process of the episode still runs in it, and two live sessions, in one process or in
several (Ray workers, pytest-xdist workers), never share one.

The pool is ``ACRES_DOMAIN_POOL`` (``FIRST-LAST``, default 100-199): domain IDs Fast DDS maps to
ports below 65535 are 0..232, and the pool stays clear of the suite's per-worker domains (40 + N)
and of env/setup_env.sh's default (73).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import random
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Final, Self

from acres_bridge.errors import AcresBridgeError

__all__ = [
    "DEFAULT_POOL",
    "LOCKS_ENV",
    "MAX_DOMAIN_ID",
    "POOL_ENV",
    "DomainLease",
    "DomainPoolError",
    "domain_pool",
    "lease_domain",
]

POOL_ENV: Final = "ACRES_DOMAIN_POOL"
LOCKS_ENV: Final = "ACRES_DOMAIN_LOCKS"
DEFAULT_POOL: Final = range(100, 200)
DEFAULT_LOCKS: Final = Path("/tmp/acres_domains")
MAX_DOMAIN_ID: Final = 232  # the largest domain whose Fast DDS ports stay below 65535


class DomainPoolError(AcresBridgeError):
    """Raised when the pool is malformed or every domain of it is held by a live session."""


def domain_pool(environ: Mapping[str, str] | None = None) -> range:
    """The domains sessions may lease: ACRES_DOMAIN_POOL (FIRST-LAST, both included) or 100-199."""
    text = (os.environ if environ is None else environ).get(POOL_ENV, "").strip()
    if not text:
        return DEFAULT_POOL
    first, sep, last = text.partition("-")
    try:
        low, high = int(first), int(last if sep else first)
    except ValueError:
        raise DomainPoolError(f"{POOL_ENV} must be FIRST-LAST (e.g. 100-199), found {text!r}") from None
    if not 0 <= low <= high <= MAX_DOMAIN_ID:
        raise DomainPoolError(
            f"{POOL_ENV} must lie within 0..{MAX_DOMAIN_ID} with FIRST <= LAST, found {text!r}"
        )
    return range(low, high + 1)


@dataclass
class DomainLease:
    """A DDS domain held for one session until release() (or the end of the process)."""

    domain_id: int
    path: Path
    _fd: int | None

    def release(self) -> None:
        """Give the domain back (once)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def fileno(self) -> int:
        """The lease's file descriptor, for a child to inherit: the domain stays held until the
        child has ended as well."""
        if self._fd is None:
            raise DomainPoolError(f"the lease of domain {self.domain_id} has been released")
        return self._fd

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.release()


def lease_domain(
    *, pool: range | None = None, locks: Path | None = None, rng: random.Random | None = None
) -> DomainLease:
    """Lease a free domain of the pool; DomainPoolError when all are held.

    The domains are tried from a random start, so sessions starting at once rarely try the same one
    first; the lock decides, whatever the order."""
    domains = domain_pool() if pool is None else pool
    folder = locks or Path(os.environ.get(LOCKS_ENV, "") or DEFAULT_LOCKS)
    folder.mkdir(parents=True, exist_ok=True)
    start = (rng or random.Random()).randrange(len(domains))
    for offset in range(len(domains)):
        domain = domains[(start + offset) % len(domains)]
        path = folder / f"domain_{domain}.lock"
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        except BaseException:
            os.close(fd)
            raise
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
        return DomainLease(domain, path, fd)
    raise DomainPoolError(
        f"every domain of {domains.start}..{domains.stop - 1} is held by a live session on this machine "
        f"(locks in {folder}); end one, or widen {POOL_ENV}"
    )
