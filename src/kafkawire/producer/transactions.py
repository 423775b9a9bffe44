"""The transactional producer's conversations with its coordinators (KIP-98), on the IO thread.

What may be called when is `kafkawire.core.transactions` (one state table); this module does the
talking: FindCoordinator, InitProducerId with the transactional id, AddPartitionsToTxn before a
partition's first batch, AddOffsetsToTxn then TxnOffsetCommit to the group's coordinator, and
EndTxn. Coordinator errors that only mean "ask again" (moved, loading, busy) are retried here until
the caller's deadline; the rest are classified for the application as retriable, abortable
(``txn_requires_abort()``) or fatal (a newer producer with the same ``transactional.id``).
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from ..client.cluster import Client
from ..core.backoff import backoff_delay
from ..core.idempotence import BUMP_REFUSED_ERRORS, Idempotence
from ..core.transactions import State, TransactionState
from ..errors import KafkaError, KafkaException
from ..protocol.apis import (
    ADD_OFFSETS_TO_TXN,
    ADD_PARTITIONS_TO_TXN,
    END_TXN,
    FIND_COORDINATOR,
    INIT_PRODUCER_ID,
    TXN_OFFSET_COMMIT,
)
from ..protocol.codec import Struct
from ..protocol.schema import Api

log = logging.getLogger("kafkawire.producer")

TRANSACTION_KEY, GROUP_KEY = 1, 0
# Ask again (after finding the coordinator anew for the first two).
COORDINATOR_MOVED = frozenset({15, 16})  # COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR
BUSY = frozenset({14, 51})  # COORDINATOR_LOAD_IN_PROGRESS, CONCURRENT_TRANSACTIONS
# The producer is done for: another instance took over, or it may not use this id.
# (INVALID_PRODUCER_EPOCH, TRANSACTIONAL_ID_AUTHORIZATION_FAILED, PRODUCER_FENCED, INVALID_TXN_STATE)
FATAL = frozenset({47, 53, 90, 48})
# The broker forgot the producer (KIP-360): the abort that follows must take a new epoch.
PRODUCER_FORGOTTEN = frozenset({59, 49})  # UNKNOWN_PRODUCER_ID, INVALID_PRODUCER_ID_MAPPING
# TxnOffsetCommit's per-partition answers that only mean "ask again" (the group's coordinator
# moved or is busy, the partition is not known yet, the write timed out).
OFFSETS_AGAIN = COORDINATOR_MOVED | BUSY | frozenset({3, 7})  # + UNKNOWN_TOPIC_OR_PARTITION, REQUEST_TIMED_OUT
# Local failures of a request that another attempt may cure.
RETRY_LOCALLY = frozenset({-195, -185, -199})  # _TRANSPORT, _TIMED_OUT, _BAD_MSG
# Clients use the versions before KIP-890's "transaction v2" (which changes EndTxn and Produce).
ADD_PARTITIONS_MAX_VERSION = 3
END_TXN_MAX_VERSION = 4

Done = Callable[[Struct | None, KafkaError | None], None]


class TransactionManager:
    def __init__(
        self,
        client: Client,
        idempotence: Idempotence,
        transactional_id: str,
        transaction_timeout_ms: int,
        retry_backoff_ms: int,
        retry_backoff_max_ms: int,
    ) -> None:
        self.client = client
        self.idem = idempotence
        idempotence.transactional = True
        self.transactional_id = transactional_id
        self.transaction_timeout_ms = transaction_timeout_ms
        self.retry_backoff_ms = retry_backoff_ms
        self.retry_backoff_max_ms = retry_backoff_max_ms
        self.state = TransactionState()
        self.coordinator: int | None = None
        self.added: set[tuple[str, int]] = set()  # partitions in the open transaction
        self._adding: set[tuple[str, int]] = set()
        self._rng = random.Random()
        self.on_added: Callable[[], None] = lambda: None  # the sender's wake
        self.on_fatal: Callable[[KafkaError], None] = lambda error: None  # the producer's error_cb

    # --- the partition gate (IO thread, called by the sender) -----------------------------------

    def partition_ready(self, tp: tuple[str, int]) -> bool:
        """True once ``tp`` is part of the transaction; else asks the coordinator to add it."""
        if tp in self.added:
            return True
        if tp not in self._adding:
            self._adding.add(tp)
            self.client.engine.call_soon(self._add_partitions)
        return False

    def _add_partitions(self) -> None:
        wanted = sorted(self._adding - self.added)
        if not wanted:
            return
        topics: dict[str, list[int]] = {}
        for topic, partition in wanted:
            topics.setdefault(topic, []).append(partition)
        body = {
            "v3_and_below_transactional_id": self.transactional_id,
            "v3_and_below_producer_id": self.idem.producer_id,
            "v3_and_below_producer_epoch": self.idem.epoch,
            "v3_and_below_topics": [{"name": t, "partitions": ps} for t, ps in topics.items()],
        }

        def done(response: Struct | None, error: KafkaError | None) -> None:
            if error is not None:
                self._adding.difference_update(wanted)
                self.fail(error)
                return
            assert response is not None
            for t in response.results_by_topic_v3_and_below:
                for p in t.results_by_partition:
                    self._adding.discard((t.name, p.partition_index))
                    if p.partition_error_code == 0:
                        self.added.add((t.name, p.partition_index))
                    elif p.partition_error_code in COORDINATOR_MOVED | BUSY:
                        self._adding.add((t.name, p.partition_index))
                    else:
                        self.fail(KafkaError(p.partition_error_code, f"adding {t.name}[{p.partition_index}]"))
            if self._adding:
                self._later(self._add_partitions, 1)
            self.on_added()

        deadline = self.client.engine.now() + self.transaction_timeout_ms / 1000
        self._to_coordinator(ADD_PARTITIONS_TO_TXN, lambda v: body, done, None, ADD_PARTITIONS_MAX_VERSION, deadline)

    # --- errors ----------------------------------------------------------------------------------

    def fail(self, error: KafkaError) -> None:
        """A failure inside the transaction: fatal when fenced, else the transaction must abort."""
        code = error.code()
        if code in FATAL or error.fatal():
            first = self.state.state is not State.FATAL_ERROR
            self.state.fatal(KafkaError(code, error.str(), fatal=True))
            if first:
                self.on_fatal(KafkaError(code, error.str(), fatal=True))
        elif code not in (KafkaError._PURGE_QUEUE, KafkaError._PURGE_INFLIGHT):
            if code in PRODUCER_FORGOTTEN:
                self.idem.request_bump()
            self.state.abortable(KafkaError(code, error.str(), txn_requires_abort=True))

    def undeliverable(self) -> KafkaError | None:
        """(IO thread, each sender run) Why records still waiting in the open transaction can never
        be committed, or None: they are failed at once rather than left queued (as Java's
        ``abortUndrainedBatches``), so a commit fails fast instead of waiting for them. A lost
        sequence (a batch given up on after it left: an epoch bump is due, and nothing may leave
        under this epoch any more) makes the transaction abortable; the abort takes the new epoch."""
        if self.idem.bump_wanted and self.state.state in (State.IN_TRANSACTION, State.COMMITTING):
            self.state.abortable(
                KafkaError(
                    KafkaError._INCONSISTENT,
                    "a record of the transaction was lost after it was sent: abort the transaction",
                    txn_requires_abort=True,
                )
            )
        return self.state.cannot_commit

    # --- calls (return futures completed on the IO thread) -----------------------------------------

    def init(self, deadline: float) -> Future[None]:
        fut: Future[None] = Future()

        def body(version: int) -> dict[str, Any]:
            # A new epoch of our own id when one is due (KIP-360: the coordinator checks that we are
            # still the current producer), else the coordinator's choice for the transactional id.
            producer_id, epoch = self.idem.init_ids(version)
            return {
                "transactional_id": self.transactional_id,
                "transaction_timeout_ms": self.transaction_timeout_ms,
                "producer_id": producer_id,
                "producer_epoch": epoch,
            }

        def done(response: Struct | None, error: KafkaError | None) -> None:
            if error is not None:
                if self.idem.bumping and error.code() in BUMP_REFUSED_ERRORS:
                    # A broker that will not bump (Tansu answers UNKNOWN_SERVER_ERROR) gives the
                    # transactional id a new epoch when asked without our id.
                    self.idem.init_answered(error.code())
                    self._to_coordinator(INIT_PRODUCER_ID, body, done, None, None, deadline)
                    return
                _settle(fut, error)
                return
            assert response is not None
            self.idem.set_producer_id(response.producer_id, response.producer_epoch)
            _settle(fut, None)

        self.client.engine.call_soon(lambda: self._to_coordinator(INIT_PRODUCER_ID, body, done, None, None, deadline))
        return fut

    def end(self, commit: bool, deadline: float) -> Future[None]:
        fut: Future[None] = Future()
        body = {"committed": commit}

        def done(response: Struct | None, error: KafkaError | None) -> None:
            if error is None:
                self.added.clear()
            _settle(fut, error)

        def send() -> None:
            if not self.added:  # nothing was written: there is no transaction on the broker to end
                _settle(fut, None)
                return
            self._to_coordinator(END_TXN, lambda v: {**self._ids(), **body}, done, None, END_TXN_MAX_VERSION, deadline)

        self.client.engine.call_soon(send)
        return fut

    def send_offsets(
        self,
        group_id: str,
        generation: int,
        member_id: str,
        instance_id: str | None,
        offsets: dict[str, list[tuple[int, int, int]]],
        deadline: float,
    ) -> Future[None]:
        fut: Future[None] = Future()
        attempts = [0]

        def committed(response: Struct | None, error: KafkaError | None) -> None:
            if error is None and response is not None:
                codes = [p.error_code for t in response.topics for p in t.partitions if p.error_code]
                if codes and all(c in OFFSETS_AGAIN for c in codes):
                    delay = backoff_delay(
                        attempts[0], self.retry_backoff_ms, self.retry_backoff_max_ms, self._rng.random()
                    )
                    attempts[0] += 1
                    if self.client.engine.now() + delay < deadline:
                        self._later(commit, delay)
                        return
                if codes:
                    error = KafkaError(codes[0], "committing offsets in the transaction")
            _settle(fut, error)

        def body(version: int) -> dict[str, Any]:
            return {
                **self._ids(),
                "group_id": group_id,
                "generation_id": generation,
                "member_id": member_id,
                "group_instance_id": instance_id,
                "topics": [
                    {
                        "name": topic,
                        "partitions": [
                            {
                                "partition_index": p,
                                "committed_offset": o,
                                "committed_leader_epoch": e,
                                "committed_metadata": "",
                            }
                            for p, o, e in parts
                        ],
                    }
                    for topic, parts in offsets.items()
                ],
            }

        def commit() -> None:
            self._to_coordinator(TXN_OFFSET_COMMIT, body, committed, group_id, None, deadline)

        def added(response: Struct | None, error: KafkaError | None) -> None:
            if error is not None:
                _settle(fut, error)
                return
            commit()

        self.client.engine.call_soon(
            lambda: self._to_coordinator(
                ADD_OFFSETS_TO_TXN, lambda v: {**self._ids(), "group_id": group_id}, added, None, None, deadline
            )
        )
        return fut

    # --- talking to a coordinator ----------------------------------------------------------------

    def _ids(self) -> dict[str, Any]:
        return {
            "transactional_id": self.transactional_id,
            "producer_id": self.idem.producer_id,
            "producer_epoch": self.idem.epoch,
        }

    def _to_coordinator(
        self,
        api: Api,
        body: Callable[[int], dict[str, Any]],
        done: Done,
        group: str | None,
        max_version: int | None,
        deadline: float,
        attempt: int = 0,
    ) -> None:
        """Send to the transaction coordinator (or ``group``'s), finding it first, retrying while
        the answer is only "ask again" and the deadline allows."""
        now = self.client.engine.now()

        def again(reason: KafkaError) -> None:
            delay = backoff_delay(attempt, self.retry_backoff_ms, self.retry_backoff_max_ms, self._rng.random())
            if now + delay >= deadline:
                done(None, KafkaError(KafkaError._TIMED_OUT, f"{api.name}: {reason.str()}", retriable=True))
                return
            self._later(lambda: self._to_coordinator(api, body, done, group, max_version, deadline, attempt + 1), delay)

        def answered(response: Struct | None, error: KafkaError | None) -> None:
            if error is not None:
                if error.code() in RETRY_LOCALLY:
                    if group is None:
                        self.coordinator = None
                    again(error)
                else:
                    done(None, error)
                return
            assert response is not None
            code = response.get("error_code", 0)
            if code in COORDINATOR_MOVED:
                if group is None:
                    self.coordinator = None
                again(KafkaError(code))
            elif code in BUSY:
                again(KafkaError(code))
            elif code:
                done(None, KafkaError(code, f"{api.name} failed"))
            else:
                done(response, None)

        def with_node(node: int | None, error: KafkaError | None) -> None:
            if node is None:
                if error is not None and not (
                    error.retriable() or error.code() in RETRY_LOCALLY | COORDINATOR_MOVED | BUSY
                ):
                    done(None, error)
                else:
                    again(error or KafkaError(KafkaError._WAIT_COORD))
                return
            timeout = max(0.001, deadline - self.client.engine.now())
            self.client.request_io(api, body, answered, node=node, timeout=timeout, max_version=max_version)

        if group is None and self.coordinator is not None:
            with_node(self.coordinator, None)
        else:
            self._find(group, with_node, deadline)

    def _find(self, group: str | None, then: Callable[[int | None, KafkaError | None], None], deadline: float) -> None:
        key = group if group is not None else self.transactional_id
        key_type = GROUP_KEY if group is not None else TRANSACTION_KEY

        def body(version: int) -> dict[str, Any]:
            if version >= 4:  # batched lookups (KIP-699)
                return {"key_type": key_type, "coordinator_keys": [key]}
            return {"key": key, "key_type": key_type}

        def done(response: Struct | None, error: KafkaError | None) -> None:
            if error is not None or response is None:
                then(None, error)
                return
            entry = response.coordinators[0] if response.get("coordinators") else response
            if entry.error_code:
                then(None, KafkaError(entry.error_code, "FindCoordinator"))
                return
            if group is None:
                self.coordinator = entry.node_id
            # Make sure the client can reach it even before the metadata names it.
            if self.client.connection(entry.node_id) is None:
                self.client.refresh_metadata_io(None, lambda r, e: then(entry.node_id, e), timeout=5)
                return
            then(entry.node_id, None)

        timeout = max(0.001, deadline - self.client.engine.now())
        self.client.request_io(FIND_COORDINATOR, body, done, timeout=timeout)

    def _later(self, fn: Callable[[], None], delay: float) -> None:
        self.client.engine.call_later(delay, fn)


def _settle(fut: Future[None], error: KafkaError | None) -> None:
    if fut.done():
        return
    if error is None:
        fut.set_result(None)
    else:
        fut.set_exception(KafkaException(error))
