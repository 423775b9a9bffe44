"""Which connection failures the user hears about (``error_cb``), decided without IO.

All brokers down is reported once when every broker we know of is down now (as librdkafka: a
broker never tried is not down) and nothing is connected or connecting, and again only after some
connection came back. Down now: its last attempt failed, and its connection still tries to come
back or failed within ``recent`` seconds (the client's reconnect.backoff.ms at its longest: a
connection still wanted tries at least that often). A broker that failed once and was left alone
since (killed, restarted, its partitions moved away) says nothing about now, so one more broker
failing is not all of them. A failure that no reconnect can mend by itself (a name
that does not resolve, a certificate not trusted, credentials refused) is reported per address, once
until that address connects again, so a broker retried every second does not flood the callback.
"""

from __future__ import annotations

from collections.abc import Collection

from .kafka_error import KafkaError

Address = tuple[str, int]

# Failures reported for each address (others only count towards "all brokers down").
REPORTED_PER_ADDRESS = frozenset({KafkaError._RESOLVE, KafkaError._SSL, KafkaError._AUTHENTICATION})


def any_up(known: Collection[Address], up: Collection[Address], bootstrap_up: bool) -> bool:
    """Whether a broker is up: a connection ready or on its way up (``up``: their addresses) to a
    known broker's address, whichever part holds it (a retired bootstrap connection or a
    coordinator's lane reaches the same broker), or a bootstrap connection while bootstrapping
    (``bootstrap_up``). A connection to an address no broker is known at says nothing of them:
    brokers whose advertised addresses all fail are all down, however the bootstrap address answers
    (that report is what starts a rebootstrap)."""
    return bootstrap_up or not set(known).isdisjoint(up)


class ClusterHealth:
    def __init__(self, recent: float = float("inf")) -> None:
        self.recent = recent
        self._down: set[Address] = set()  # addresses whose last connection attempt failed
        self._failed_at: dict[Address, float] = {}  # when each of them failed last
        self._reported: dict[Address, KafkaError] = {}  # address -> the error last reported for it
        self._all_down = False

    def is_down(self, address: Address) -> bool:
        return address in self._down

    def standing(self) -> KafkaError | None:
        """A failure no reconnect mends that still stands (the latest reported): records that time
        out meanwhile say it was the cause."""
        return next(reversed(self._reported.values()), None)

    def blocking(self) -> KafkaError | None:
        """The standing failure when every known broker is down: a caller waiting for an answer
        would only wait for its deadline, so it is told this instead."""
        return self.standing() if self._all_down else None

    def up(self, address: Address) -> None:
        self._down.discard(address)
        self._reported.pop(address, None)
        self._all_down = False

    def rebootstrapped(self, bootstrap: Collection[Address]) -> None:
        """The client starts again from its bootstrap servers: they count as untried, and all
        brokers down can be reported again (as librdkafka resets it)."""
        self._down.difference_update(bootstrap)
        self._all_down = False

    def failed(
        self,
        address: Address,
        error: KafkaError,
        known: Collection[Address],
        any_live: bool,
        *,
        lasting: bool = False,
        trying: Collection[Address] = (),
        now: float = 0.0,
    ) -> list[KafkaError]:
        """The errors to report now that the connection to ``address`` failed with ``error``.

        ``known``: the addresses of every broker (metadata's, else the bootstrap list);
        ``any_live``: some connection is ready or on its way up; ``lasting``: the connection
        judged that no reconnect mends this one either (a security.protocol mismatch);
        ``trying``: the addresses whose connections still try to come back; ``now``: seconds."""
        self._down.add(address)
        self._failed_at[address] = now
        out = []
        if lasting or error.code() in REPORTED_PER_ADDRESS:
            last = self._reported.pop(address, None)
            self._reported[address] = error  # (last in the dict: the latest)
            if last is None or (last.code(), last.str()) != (error.code(), error.str()):
                out.append(error)
        down_now = {a for a in self._down if a in trying or now - self._failed_at[a] <= self.recent}
        if not self._all_down and not any_live and set(known) <= down_now:
            self._all_down = True
            out.append(KafkaError(KafkaError._ALL_BROKERS_DOWN, f"{len(known)}/{len(known)} brokers are down"))
        return out
