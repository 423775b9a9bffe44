"""Which connection failures the user hears about (``error_cb``), decided without IO.

All brokers down is reported once when every broker we know of has failed its last attempt (as
librdkafka: a broker never tried is not down) and nothing is connected or connecting, and again
only after some connection came back. A failure that no reconnect can mend by itself (a name
that does not resolve, a certificate not trusted, credentials refused) is reported per address, once
until that address connects again, so a broker retried every second does not flood the callback.
"""

from __future__ import annotations

from collections.abc import Collection

from .kafka_error import KafkaError

Address = tuple[str, int]

# Failures reported for each address (others only count towards "all brokers down").
REPORTED_PER_ADDRESS = frozenset({KafkaError._RESOLVE, KafkaError._SSL, KafkaError._AUTHENTICATION})


class ClusterHealth:
    def __init__(self) -> None:
        self._down: set[Address] = set()  # addresses whose last connection attempt failed
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
        self, address: Address, error: KafkaError, known: Collection[Address], any_live: bool, *, lasting: bool = False
    ) -> list[KafkaError]:
        """The errors to report now that the connection to ``address`` failed with ``error``.

        ``known``: the addresses of every broker (metadata's, else the bootstrap list);
        ``any_live``: some connection is ready or on its way up; ``lasting``: the connection
        judged that no reconnect mends this one either (a security.protocol mismatch)."""
        self._down.add(address)
        out = []
        if lasting or error.code() in REPORTED_PER_ADDRESS:
            last = self._reported.pop(address, None)
            self._reported[address] = error  # (last in the dict: the latest)
            if last is None or (last.code(), last.str()) != (error.code(), error.str()):
                out.append(error)
        if not self._all_down and not any_live and set(known) <= self._down:
            self._all_down = True
            out.append(KafkaError(KafkaError._ALL_BROKERS_DOWN, f"{len(known)}/{len(known)} brokers are down"))
        return out
