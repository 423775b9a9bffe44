"""How quickly a client leaves a broker that is down, decided without IO (issue 39).

A request that can be answered elsewhere (a group coordinator's: a fresh FindCoordinator names the
new one) must not sit queued on the connection to a broker that just failed until it returns or
the request's deadline passes: as librdkafka, it fails at once and its caller looks again. The
connection keeps trying to come back by itself (with its reconnect backoff), so a broker that
returns is used again. While the coordinator cannot be reached it is looked up about every
``retry.backoff.ms`` rather than every ``coordinator.query.interval.ms``.
"""

from __future__ import annotations

import enum

from ..protocol.apis import FETCH, FIND_COORDINATOR, INIT_PRODUCER_ID, METADATA, PRODUCE
from ..protocol.schema import Api

# Requests another broker answers once metadata names it (a partition's new leader): a Produce or
# Fetch to a leader that is down fails at once (never written: a retry keeps its sequence), its
# partitions' metadata is refreshed, and it is sent again to whichever broker leads them then.
FAILS_OVER: frozenset[Api] = frozenset({FETCH, PRODUCE})


# Requests for any broker whose callers ask again at once: a coordinator lookup, an idempotent
# producer's id, metadata (Client.refresh_metadata asks again until its timeout). Queued on a broker
# that had just died, a transactional producer's FindCoordinator waited out socket.timeout.ms there
# (init_transactions timed out), and a joining member's Metadata waited 37 s on a dead bootstrap
# broker; librdkafka sends these only to a broker that is up. (Admin requests keep riding the
# connection's next attempt: a write's caller takes a lost connection as final.)
ANY_BROKER_FAILS_OVER: frozenset[Api] = frozenset({FIND_COORDINATOR, INIT_PRODUCER_ID, METADATA})


def fails_over(api: Api, *, any_broker: bool, coordinator_lane: bool) -> bool:
    """Whether a request leaves a broker that is down for its caller to ask elsewhere: FAILS_OVER's
    APIs, a coordinator's (a fresh lookup names the new one), and ANY_BROKER_FAILS_OVER's when any
    broker may answer (the next try goes to one that is up)."""
    key = api.key
    return coordinator_lane or key in _FAILS_OVER_KEYS or (any_broker and key in _ANY_BROKER_KEYS)


# The two sets by API key: asked at every request, where an Api's hash is a Python call.
_FAILS_OVER_KEYS = frozenset(a.key for a in FAILS_OVER)
_ANY_BROKER_KEYS = frozenset(a.key for a in ANY_BROKER_FAILS_OVER)


class WhenDown(enum.Enum):
    QUEUE = "queue: connect now, or wait for the connection"
    FAIL = "fail now: the caller fails over"


def request_when_down(*, fails_over: bool, failed_since_ready: bool, backing_off: bool) -> WhenDown:
    """A request for a connection that is not ready. ``fails_over``: its caller can ask another
    broker; ``failed_since_ready``: the connection's last attempt failed (not merely idle-closed
    or never opened); ``backing_off``: it waits out its reconnect backoff before the next attempt.
    Such a request fails at once while the connection backs off; otherwise it rides the next
    attempt (and fails if that fails)."""
    if fails_over and failed_since_ready and backing_off:
        return WhenDown.FAIL
    return WhenDown.QUEUE


def coordinator_query_delay(*, interval: float, backoff: float, reachable: bool) -> float:
    """Seconds until the coordinator is looked up again: ``coordinator.query.interval.ms`` while its
    connection is up, ``retry.backoff.ms`` while it is unknown or cannot be reached."""
    return interval if reachable else min(interval, backoff)
