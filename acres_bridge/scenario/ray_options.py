"""The Ray options of a sweep, checked before anything starts: pure but for one probe of an address.

``check_ray_options``: at least one CPU, an episode's CPUs within what the local Ray would have.
``probe_ray_address``: a HOST:PORT where Ray's GCS answers, within seconds (a TCP connection and
the HTTP/2 greeting of its gRPC server), since ``ray.init`` itself waits minutes for an address
where nothing answers. ``largest_node_cpus``: what the largest live node of a cluster has, for the
check after connecting.
"""

from __future__ import annotations

import ipaddress
import math
import os
import socket
from collections.abc import Mapping, Sequence
from typing import Any, Final

from acres_bridge.scenario.errors import RayOptionsError

__all__ = [
    "MAX_CPUS",
    "PROBE_S",
    "check_ray_options",
    "is_loopback",
    "largest_node_cpus",
    "parse_address",
    "probe_ray_address",
]

MAX_CPUS: Final = 1024  # of a local Ray, and of an episode
PROBE_S: Final = 5.0  # each step of the probe of an address: the connection, then the answer
_HTTP2_GREETING: Final = (
    b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes(3) + b"\x04" + bytes(5)
)  # the HTTP/2 preface, then an empty SETTINGS frame
_HTTP2_SETTINGS: Final = 0x4


def parse_address(text: str) -> tuple[str, int]:
    """(host, port) of 'HOST:PORT' ('[::1]:6379' for IPv6); RayOptionsError for anything else."""
    host, sep, port = text.rpartition(":")
    host = host.removeprefix("[").removesuffix("]")
    if not sep or not host or not port.isdigit() or not 1 <= int(port) <= 65535 or len(text) > 300:
        raise RayOptionsError(
            f"--address {text[:300]!r}: expected HOST:PORT of a Ray cluster, e.g. 10.0.0.5:6379"
        )
    if any(c.isspace() or not c.isprintable() for c in host):
        raise RayOptionsError(f"--address {text!r}: the host holds a space or a control character")
    return host, int(port)


def check_ray_options(
    *, cpus: int | None, cpus_per_episode: float, address: str | None, starts_ray: bool = True
) -> None:
    """RayOptionsError when the options cannot run a sweep: fewer than 1 CPU (or more than
    MAX_CPUS), an episode's CPUs not a number above 0, or more than the local Ray that this
    process would start has (`cpus`, or this machine's), or an address that is no HOST:PORT.
    Nothing is started."""
    if cpus is not None and not 1 <= cpus <= MAX_CPUS:
        raise RayOptionsError(f"--cpus {cpus}: a local Ray has 1 .. {MAX_CPUS} CPUs")
    per_episode = cpus_per_episode
    if not math.isfinite(per_episode) or not 0 < per_episode <= MAX_CPUS:
        raise RayOptionsError(
            f"--cpus-per-episode {per_episode:g}: an episode takes more than 0 CPUs, at most {MAX_CPUS}"
        )
    if address is not None:
        parse_address(address)
    elif not starts_ray:
        return
    elif cpus is not None and per_episode > cpus:
        raise RayOptionsError(
            f"--cpus-per-episode {per_episode:g} is more than the local Ray's --cpus {cpus}: "
            "no episode could ever start"
        )
    elif per_episode > (machine := os.cpu_count() or 1):
        raise RayOptionsError(
            f"--cpus-per-episode {per_episode:g} is more than this machine's {machine} CPUs, the local "
            "Ray's: no episode could ever start"
        )


def probe_ray_address(address: str, timeout_s: float | None = None) -> None:
    """RayOptionsError, within about twice `timeout_s` (default PROBE_S), unless something accepts a
    TCP connection at the address and answers the greeting of HTTP/2 (Ray's GCS is a gRPC server)
    with its settings. With RAY_USE_TLS the greeting is left out: a TLS server waits for a TLS one."""
    host, port = parse_address(address)
    timeout_s = PROBE_S if timeout_s is None else timeout_s
    refusal = f"no Ray cluster answers at {address}"
    try:
        with socket.create_connection((host, port), timeout=timeout_s) as connection:
            if os.environ.get("RAY_USE_TLS", "0").lower() in ("1", "true"):
                return
            connection.settimeout(timeout_s)
            connection.sendall(_HTTP2_GREETING)
            header = _receive(connection, 9)
    except TimeoutError:
        raise RayOptionsError(
            f"{refusal}: no answer within {timeout_s:g} s (is it Ray's GCS port?)"
        ) from None
    except OSError as error:
        raise RayOptionsError(f"{refusal}: {error.strerror or error}") from None
    if len(header) < 9 or header[3] != _HTTP2_SETTINGS:
        raise RayOptionsError(
            f"{refusal}: something listens there, but it does not answer as Ray's GCS (gRPC)"
        )


def _receive(connection: socket.socket, size: int) -> bytes:
    """Up to `size` bytes, fewer when the peer closes the connection first."""
    data = b""
    while len(data) < size:
        chunk = connection.recv(size - len(data))
        if not chunk:
            break
        data += chunk
    return data


def largest_node_cpus(nodes: Sequence[Mapping[str, Any]]) -> float:
    """The CPUs of the largest live node of ``ray.nodes()`` (0 without one)."""
    return max(
        (float(node.get("Resources", {}).get("CPU", 0.0)) for node in nodes if node.get("Alive", False)),
        default=0.0,
    )


def is_loopback(host: str) -> bool:
    """Whether `host` names this machine's loopback (localhost, 127.0.0.0/8, ::1)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
