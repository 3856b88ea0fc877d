"""Isolated sessions: a simulator, the bridge and a stack in a DDS domain of their own.

from acres_bridge.session import IsolatedSession, SessionConfig
"""

from acres_bridge.session.domains import DomainLease, DomainPoolError, lease_domain
from acres_bridge.session.isolated import AgentConfig, IsolatedSession, SessionConfig, SessionError, StartPose

__all__ = [
    "AgentConfig",
    "DomainLease",
    "DomainPoolError",
    "IsolatedSession",
    "SessionConfig",
    "SessionError",
    "StartPose",
    "lease_domain",
]
