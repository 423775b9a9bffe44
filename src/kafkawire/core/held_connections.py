"""Which brokers a client keeps connected with no request waiting: ``enable.sparse.connections`` (sans-IO).

What librdkafka 2.16 does, measured on its mock cluster (3 brokers, confluent-kafka 2.16, requests
counted per broker, ``debug=broker``):

- true (its default): a broker is connected when a request needs it (the bootstrap address the
  first Metadata goes to, the leaders a producer sends to, the coordinator); a producer of one topic
  led by broker 1, bootstrapped on broker 2, never connects to broker 3.
- false: every bootstrap address is connected at once, then every broker the first Metadata answer
  names (a broker no request ever goes to gets its ApiVersions and nothing else); each is kept: a
  failed connection comes back after ``reconnect.backoff.ms``, an idle one closed after
  ``connections.max.idle.ms`` is made again at once, a broker the metadata stops naming is let go and
  one it names again is connected as soon as that answer comes.

The client (`kafkawire.client.network_client`) asks `held` after each Metadata answer (and once at
start, with the bootstrap connections' ids) and tells each connection whether it is kept.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable


class Holding(enum.Enum):
    """What a client keeps connected, by ``enable.sparse.connections``."""

    NEEDED = "needed"  # true: only the connections a request needs, made when it needs them
    EVERY_BROKER = "every broker"  # false: every broker known, kept up

    @classmethod
    def from_sparse(cls, sparse: bool) -> Holding:
        return cls.NEEDED if sparse else cls.EVERY_BROKER


# Holding -> the brokers kept, of the node ids the client knows now.
_KEPT: dict[Holding, Callable[[Iterable[int]], frozenset[int]]] = {
    Holding.NEEDED: lambda _known: frozenset(),
    Holding.EVERY_BROKER: frozenset,
}


def held(holding: Holding, known: Iterable[int]) -> frozenset[int]:
    """The node ids to keep connected: ``known`` is the brokers the last Metadata answer named, or
    before any answer the bootstrap connections' (negative) ids."""
    return _KEPT[holding](known)
