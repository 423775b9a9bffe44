"""What the handlers share: the cluster state, the coordinators' state, the faults, and the
shapes of a request in and a handler's answer out. Sans-IO (times are passed in)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Union

from kafkawire.protocol.codec import Struct
from kafkawire.protocol.schema import Api

from .consumer_groups import ConsumerGroups
from .faults import Faults
from .fetch_sessions import FetchSessions
from .groups import Groups
from .mock_transactions import Transactions
from .state import ClusterState

AUTHENTICATED = "authenticated"
LOGIN_APIS = frozenset({17, 18, 36})  # SaslHandshake, ApiVersions, SaslAuthenticate


@dataclass
class Request:
    """One decoded request, with where and when it arrived."""

    broker_id: int
    connection: int
    api: Api
    version: int
    header: Struct
    body: Struct
    now_ms: int


@dataclass
class Parked:
    """An answer that waits (a Fetch for data, a JoinGroup for the other members): ``poll(now,
    expired)`` gives the body once it is ready, and must give one when ``expired``."""

    poll: Callable[[int, bool], dict[str, Any] | None]
    deadline_ms: int


Answer = Union[dict[str, Any], Parked, None]  # noqa: UP007 (a runtime alias)  # None: no answer at all (Produce with acks=0)
Handler = Callable[["World", Request], Answer]


@dataclass
class World:
    state: ClusterState
    faults: Faults = field(default_factory=Faults)
    groups: Groups = field(default_factory=Groups)
    consumer_groups: ConsumerGroups = field(default_factory=ConsumerGroups)
    transactions: Transactions = field(default_factory=Transactions)
    sessions: FetchSessions = field(default_factory=FetchSessions)
    users: dict[str, str] | None = None  # SASL users and passwords: None, no login needed
    authenticated: dict[int, Any] = field(default_factory=dict)  # connection -> SASL conversation or AUTHENTICATED

    def may_serve(self, connection: int, api_key: int) -> bool:
        """Before it has logged in, a connection to a cluster with users gets only the login's APIs."""
        return self.users is None or api_key in LOGIN_APIS or self.authenticated.get(connection) is AUTHENTICATED

    def tick(self, now_ms: int) -> None:
        """Expire what timed out (group members), at every loop turn."""
        self.groups.expire(now_ms)
        self.consumer_groups.expire(now_ms, self.state)
