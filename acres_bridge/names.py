"""ROS names of the bridge's topics: namespaces and the absolute name of a topic in one."""

from __future__ import annotations

__all__ = ["normalize_namespace", "resolve_name"]


def normalize_namespace(namespace: str) -> str:
    """'' for the root namespace, else '/a/b' without a trailing slash."""
    stripped = namespace.strip("/")
    return f"/{stripped}" if stripped else ""


def resolve_name(name: str, namespace: str) -> str:
    """The absolute name of a topic of a bridge in this namespace (absolute names stay)."""
    if name.startswith("/"):
        return name
    return f"{normalize_namespace(namespace)}/{name}"
