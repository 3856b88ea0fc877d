"""Each live session holds a DDS domain no other live session on this machine holds."""

from __future__ import annotations

import subprocess
import sys

import pytest

from acres_bridge.processes import ChildProcess
from acres_bridge.session.domains import DEFAULT_POOL, DomainPoolError, domain_pool, lease_domain


def test_the_pool_comes_from_the_environment():
    assert domain_pool({}) == DEFAULT_POOL
    assert domain_pool({"ACRES_DOMAIN_POOL": "150-152"}) == range(150, 153)
    assert domain_pool({"ACRES_DOMAIN_POOL": "7"}) == range(7, 8)
    for bad in ("1-x", "9-3", "200-240", "-1"):
        with pytest.raises(DomainPoolError, match="ACRES_DOMAIN_POOL"):
            domain_pool({"ACRES_DOMAIN_POOL": bad})


def test_live_leases_never_share_a_domain_and_a_released_one_is_free_again(tmp_path):
    pool = range(150, 153)
    leases = [lease_domain(pool=pool, locks=tmp_path) for _ in pool]
    assert sorted(lease.domain_id for lease in leases) == list(pool)
    with pytest.raises(DomainPoolError, match=r"every domain of 150\.\.152 is held"):
        lease_domain(pool=pool, locks=tmp_path)
    leases[1].release()
    leases[1].release()  # once is enough; twice is harmless
    again = lease_domain(pool=pool, locks=tmp_path)
    assert again.domain_id == leases[1].domain_id
    for lease in (*leases, again):
        lease.release()


def test_a_lease_of_another_process_counts_until_that_process_ends(tmp_path):
    code = (
        "import sys; from pathlib import Path; from acres_bridge.session.domains import lease_domain\n"
        f"lease = lease_domain(pool=range(160, 161), locks=Path({str(tmp_path)!r}))\n"
        "print(lease.domain_id, flush=True); sys.stdin.readline()"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "160"
        with pytest.raises(DomainPoolError):
            lease_domain(pool=range(160, 161), locks=tmp_path)
    finally:
        holder.kill()  # however it ends, the kernel drops its lock
        holder.wait(10)
    with lease_domain(pool=range(160, 161), locks=tmp_path) as lease:
        assert lease.domain_id == 160
    assert not lease.held


def test_a_child_given_the_lease_holds_the_domain_until_it_ends_too(tmp_path):
    """A session's processes inherit its lease: a domain is not leased again while one of them runs
    in it, even after the session's own descriptor is closed (its program died)."""
    lease = lease_domain(pool=range(161, 162), locks=tmp_path)
    child = ChildProcess.start(
        "holder", [sys.executable, "-c", "import time; time.sleep(60)"], keep_fds=(lease.fileno(),)
    )
    try:
        lease.release()
        with pytest.raises(DomainPoolError):
            lease_domain(pool=range(161, 162), locks=tmp_path)
        with pytest.raises(DomainPoolError, match="released"):
            lease.fileno()
    finally:
        child.stop(timeout_s=5.0)
    with lease_domain(pool=range(161, 162), locks=tmp_path) as again:
        assert again.domain_id == 161
