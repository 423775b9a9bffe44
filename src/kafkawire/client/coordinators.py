"""Finding coordinators (FindCoordinator), once for every client: groups' and transactional ids'.

Answers are cached per (key type, key) until a conversation says the coordinator moved
(NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, a lost connection: the driver's REFIND_COORDINATOR
calls `Coordinators.forget`). Several keys are looked up in one request when the broker speaks
FindCoordinator v4+ (KIP-699); an older broker answers the first key only, and the others are then
asked one request each (remembered, so later lookups go one by one at once). `find_io` is one
attempt, the caller's driver `Operation` retries it: `ToCoordinator` routes a call's keys with it,
`Coordinators.locate_io` is a member's standing lookup.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from ..core.kafka_error import KafkaError
from ..core.policy.coordinator import FIND_COORDINATOR as LOOKUP_POLICY
from ..protocol.apis import FIND_COORDINATOR
from ..protocol.codec import Struct
from .driver import Body, Callback, Cluster, Operation, Routed, Router
from .routers import ANY_BROKER, with_metadata

GROUP, TRANSACTION = 0, 1  # FindCoordinator's key types

Found = dict[str, "int | KafkaError"]


class Coordinators:
    """The coordinator cache of one cluster client; all methods run on the IO thread."""

    def __init__(self, client: Cluster) -> None:
        self.client = client
        self._nodes: dict[tuple[int, str], int] = {}
        self._batched: bool | None = None  # does the broker take several keys per request (v4+)?

    def cached(self, key_type: int, key: str) -> int | None:
        return self._nodes.get((key_type, key))

    def forget(self, key_type: int, key: str) -> None:
        self._nodes.pop((key_type, key), None)

    def locate_io(
        self,
        key_type: int,
        key: str,
        found: Callable[[int], None],
        *,
        request_timeout: float,
        backoff_ms: tuple[int, int],
        heard: Callable[[int | KafkaError], None] | None = None,
        fresh: bool = False,
    ) -> Operation[str]:
        """Ask for ``key``'s coordinator until it is found, then ``found(node)``: a driver
        `Operation` without a deadline (policy FIND_COORDINATOR: every failure is asked again after
        the backoff), each ask one `find_io` (``fresh``: of the cluster, not the cache). ``heard``
        hears every answer (a member's debug); aborting the returned operation stops it (the member
        left, or looks again)."""

        def send(_node: int | None, _body: Body, done: Callback, timeout: float) -> None:
            def answered(answer: Found) -> None:
                outcome = answer.get(key, KafkaError(KafkaError._FAIL, "FindCoordinator: no answer"))
                if heard is not None:
                    heard(outcome)
                if isinstance(outcome, KafkaError):
                    done(None, outcome)
                else:
                    done(Struct(node_id=outcome), None)

            self.find_io(key_type, [key], timeout, answered, fresh=fresh)

        op: Operation[str] = Operation(
            self.client,
            [key],
            api=FIND_COORDINATOR,
            router=ANY_BROKER,
            body=lambda _keys, _version: {},
            parse=lambda response, _keys, _node: {key: response.node_id},
            policy=LOOKUP_POLICY,
            deadline=math.inf,
            backoff_ms=backoff_ms,
            send=send,
            request_timeout=request_timeout,
        )

        def done(fut: Future[Any]) -> None:
            if not fut.cancelled() and fut.exception() is None:
                found(fut.result())

        op.future(key).add_done_callback(done)
        return op.start_io()

    def find_io(
        self, key_type: int, keys: list[str], timeout: float, then: Callable[[Found], None], *, fresh: bool = False
    ) -> None:
        """Each key's coordinator node (known to the metadata by the time ``then`` runs) or the
        KafkaError of its lookup; one attempt, the caller's policy decides about retries. ``fresh``
        asks the cluster even for a key the cache knows, which keeps serving others meanwhile: a
        member's periodic query must not make its rejoin or a commit wait for that answer, which a
        one-broker cluster gives behind the member's Fetch long-poll (librdkafka keeps its current
        coordinator while its query is out)."""
        found: Found = {}
        missing = []
        for key in dict.fromkeys(keys):
            node = None if fresh else self._nodes.get((key_type, key))
            if node is None:
                missing.append(key)
            else:
                found[key] = node
        if not missing:
            then(found)
            return
        pending = [0]

        def answered(asked: list[str], response: Struct | None, error: KafkaError | None) -> None:
            pending[0] -= 1
            if response is None:
                for key in asked:
                    found[key] = error or KafkaError(KafkaError._FAIL, "FindCoordinator: no answer")
            else:
                entries = response.get("coordinators") or [{**response, "key": asked[0]}]
                for entry in entries:
                    key = entry["key"]
                    if key not in asked:
                        continue
                    if entry["error_code"]:
                        found[key] = KafkaError(entry["error_code"], entry.get("error_message") or None)
                    else:
                        found[key] = entry["node_id"]
                        self._nodes[(key_type, key)] = entry["node_id"]
                rest = [key for key in asked if key not in found]
                if rest and not self._batched:
                    for key in rest:
                        ask([key])
                else:
                    for key in rest:
                        found[key] = KafkaError(KafkaError._BAD_MSG, f"FindCoordinator did not answer for {key!r}")
            if pending[0] == 0:
                self._reachable(found, timeout, then)

        def ask(asked: list[str]) -> None:
            pending[0] += 1

            def body(version: int) -> dict[str, Any]:
                self._batched = version >= 4
                if self._batched:
                    return {"key_type": key_type, "coordinator_keys": asked}
                return {"key": asked[0], "key_type": key_type}

            self.client.request_io(FIND_COORDINATOR, body, lambda r, e: answered(asked, r, e), timeout=timeout)

        if self._batched is False:
            for key in missing:
                ask([key])
        else:
            ask(missing)

    def _reachable(self, found: Found, timeout: float, then: Callable[[Found], None]) -> None:
        """Refresh metadata first when a coordinator is a broker the metadata does not name yet."""
        brokers = self.client.metadata.brokers
        if any(isinstance(node, int) and node not in brokers for node in found.values()):
            self.client.refresh_metadata_io([], lambda _r, _e: then(found), timeout=timeout)
        else:
            then(found)


class ToCoordinator(Router):
    """Keys to their coordinator: ``key_of(key)`` is the group id or transactional id it belongs to."""

    coordinator_lane = True

    def __init__(self, coordinators: Coordinators, key_type: int, key_of: Callable[[Any], str] = str) -> None:
        self.coordinators = coordinators
        self.key_type = key_type
        self.key_of = key_of

    def route(self, op: Operation[Any], keys: list[Any], refresh: bool, done: Callable[[Routed], None]) -> None:
        def routed(found: Found) -> None:
            groups: dict[int | None, list[Any]] = {}
            errors: dict[Any, KafkaError] = {}
            for key in keys:
                node = found[self.key_of(key)]
                if isinstance(node, KafkaError):
                    errors[key] = node
                else:
                    groups.setdefault(node, []).append(key)
            done((groups, errors))

        names = [self.key_of(key) for key in keys]
        with_metadata(op, None, refresh, lambda: self.coordinators.find_io(self.key_type, names, op.timeout(), routed))

    def forget(self, op: Operation[Any], keys: list[Any]) -> None:
        for key in keys:
            self.coordinators.forget(self.key_type, self.key_of(key))
