"""The transactional producer's conversations with its coordinators (KIP-98), on the IO thread.

What may be called when, and what an error does to the transaction, is `kafkawire.core.transactions`
(tables); this module does the talking, each conversation one `kafkawire.client.driver.Operation`
to the transaction coordinator (or the group's, for TxnOffsetCommit) found through the shared
`Coordinators` cache: InitProducerId with the transactional id, AddPartitionsToTxn before a
partition's first batch, AddOffsetsToTxn then TxnOffsetCommit, and EndTxn. Answers that only mean
"ask again" (moved, loading, busy: `core/policy/coordinator.py`) are retried by the driver until the
caller's deadline.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from typing import Any

from ..base.debug import MAIN, OFF, Debug
from ..client.coordinators import GROUP, TRANSACTION, ToCoordinator
from ..client.driver import Operation, error_of, whole
from ..client.group_transactions import GROUP_TRANSACTIONS
from ..client.network_client import Client
from ..core.idempotence import INIT_ERRORS, Idempotence, InitError
from ..core.kafka_error import KafkaError, KafkaException
from ..core.policy import Action, ErrorPolicy
from ..core.policy.coordinator import COORDINATOR
from ..core.policy.coordinator import TXN_OFFSET_COMMIT as OFFSETS_POLICY
from ..core.transactions import Call, Failure, TransactionState, TxnState, as_reported, failure_of
from ..protocol import error_codes as ec
from ..protocol.apis import (
    ADD_OFFSETS_TO_TXN,
    ADD_PARTITIONS_TO_TXN,
    END_TXN,
    INIT_PRODUCER_ID,
    TXN_OFFSET_COMMIT,
)
from ..protocol.codec import Struct
from ..protocol.schema import Api

log = logging.getLogger("kafkawire.producer")

# Clients use the versions before KIP-890's "transaction v2" (which changes EndTxn and Produce).
ADD_PARTITIONS_MAX_VERSION = 3
END_TXN_MAX_VERSION = 4

Parse = Callable[[Struct, list[Any], int | None], Mapping[Any, Any]]


class SharedTransactionState(TransactionState):
    """`TransactionState` shared by the application's threads and the IO thread: each rule runs
    under one lock (the core decides; guarding it from threads is the producer's business). Each
    change of state is told to the ``eos`` debug context."""

    def __init__(self, debug: Debug = OFF) -> None:
        self._debug = debug
        self._state = TxnState.UNINITIALIZED
        super().__init__()
        self._lock = threading.Lock()

    @property
    def state(self) -> TxnState:
        return self._state

    @state.setter
    def state(self, new: TxnState) -> None:
        if new is not self._state and self._debug.eos:
            self._debug.log("eos", "TXNSTATE", MAIN, "Transaction state change %s -> %s", self._state.name, new.name)
        self._state = new

    def require(self, call: Call) -> None:
        with self._lock:
            super().require(call)

    def succeeded(self, call: Call) -> None:
        with self._lock:
            super().succeeded(call)

    def allows(self, call: Call) -> bool:
        with self._lock:
            return super().allows(call)

    def call_failed(self, call: Call | None, error: KafkaError) -> KafkaError:
        with self._lock:
            return super().call_failed(call, error)

    def interrupted(self, call: Call) -> None:
        with self._lock:
            super().interrupted(call)

    def abortable(self, error: KafkaError) -> None:
        with self._lock:
            super().abortable(error)

    @property
    def cannot_commit(self) -> KafkaError | None:
        with self._lock:
            return super().cannot_commit

    def fatal(self, error: KafkaError) -> None:
        with self._lock:
            super().fatal(error)


class TransactionManager:
    def __init__(
        self,
        client: Client,
        idempotence: Idempotence,
        transactional_id: str,
        transaction_timeout_ms: int,
        retry_backoff_ms: int,
        retry_backoff_max_ms: int,
        *,
        request_timeout_ms: int | None = None,
        debug: Debug = OFF,
    ) -> None:
        self.client = client
        self.idem = idempotence
        idempotence.transactional = True
        self.transactional_id = transactional_id
        self.transaction_timeout_ms = transaction_timeout_ms
        self.backoff_ms = (retry_backoff_ms, retry_backoff_max_ms)
        # Each request's own bound (socket.timeout.ms, as librdkafka): a silent coordinator is
        # asked again within the call's deadline.
        self.request_timeout = None if request_timeout_ms is None else request_timeout_ms / 1000
        self.state = SharedTransactionState(debug)
        self.coordinators = client.coordinators
        self._to_transaction = ToCoordinator(self.coordinators, TRANSACTION, lambda _key: self.transactional_id)
        self._to_group = ToCoordinator(self.coordinators, GROUP)
        self.added: set[tuple[str, int]] = set()  # partitions in the open transaction
        self.offsets_added = False  # a group's offsets are in it (AddOffsetsToTxn answered)
        self._offsets_sent: dict[tuple[str, int], int] = {}  # committed with it (TxnOffsetCommit answered)
        # The broker took the offsets without the member's generation (TxnOffsetCommit below v3: no
        # KIP-447), and that member lost its partitions while this transaction was committing: see `end`.
        self._offsets_unchecked = False
        self._member_lost = False
        self._ended = 0  # transactions ended: a group's fence names the one it was set for
        self._adding: set[tuple[str, int]] = set()  # asked for by the sender, not added yet
        self._asking: set[tuple[str, int]] = set()  # of those, in an AddPartitionsToTxn now
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
        wanted = sorted(self._adding - self.added - self._asking)
        if not wanted:
            return
        self._asking.update(wanted)

        def body(tps: list[tuple[str, int]], version: int) -> dict[str, Any]:
            topics: dict[str, list[int]] = {}
            for topic, partition in tps:
                topics.setdefault(topic, []).append(partition)
            return {
                "v3_and_below_transactional_id": self.transactional_id,
                "v3_and_below_producer_id": self.idem.producer_id,
                "v3_and_below_producer_epoch": self.idem.epoch,
                "v3_and_below_topics": [{"name": t, "partitions": ps} for t, ps in topics.items()],
            }

        def parse(response: Struct, tps: list[Any], node: int | None) -> dict[Any, Any]:
            return {
                (t.name, p.partition_index): KafkaError(p.partition_error_code, f"adding {t.name}[{p.partition_index}]")
                if p.partition_error_code
                else True
                for t in response.results_by_topic_v3_and_below
                for p in t.results_by_partition
            }

        deadline = self.client.engine.now() + self.transaction_timeout_ms / 1000
        op = self._call(ADD_PARTITIONS_TO_TXN, wanted, body, parse, deadline, max_version=ADD_PARTITIONS_MAX_VERSION)
        left = [len(wanted)]

        def one_done(tp: tuple[str, int], fut: Future[Any]) -> None:
            self._adding.discard(tp)
            self._asking.discard(tp)
            error = error_of(fut)
            if error is None:
                self.added.add(tp)
            else:
                self.fail(as_reported("add partitions to transaction", error))
            left[0] -= 1
            if left[0] == 0:
                self.on_added()

        for tp, fut in op.futures.items():
            fut.add_done_callback(functools.partial(one_done, tp))

    # --- errors ----------------------------------------------------------------------------------

    def fail(self, error: KafkaError) -> None:
        """A failure inside the transaction: fatal when fenced, else the transaction must abort."""
        failure = failure_of(error)
        code = error.code()
        if failure is Failure.FATAL:
            if self.state.state is not TxnState.FATAL_ERROR:  # the first is the cause: kept
                self.state.fatal(KafkaError(code, error.str(), fatal=True))
                self.on_fatal(KafkaError(code, error.str(), fatal=True))
        elif failure is not Failure.PURGED:
            if failure is Failure.FORGOTTEN:
                self.idem.request_bump()
            self.state.abortable(KafkaError(code, error.str(), txn_requires_abort=True))

    def _fenced_by_group(self, transaction: int) -> None:
        """(any thread) The group member whose offsets transaction number ``transaction`` carries
        lost its partitions. Open, it can only abort; committing on a broker that took the offsets
        without the member's generation, its commit turns into an abort (`end`)."""
        if transaction != self._ended:
            return  # that transaction ended already
        if self.state.state is TxnState.COMMITTING and self._offsets_unchecked:
            self._member_lost = True
        elif self.state.state is TxnState.IN_TRANSACTION:
            self.state.abortable(
                KafkaError(
                    KafkaError.ILLEGAL_GENERATION,
                    "the group member lost its partitions: abort the transaction",
                    txn_requires_abort=True,
                )
            )

    def undeliverable(self) -> KafkaError | None:
        """(IO thread, each sender run) Why records still waiting in the open transaction can never
        be committed, or None: they are failed at once rather than left queued (as Java's
        ``abortUndrainedBatches``), so a commit fails fast instead of waiting for them. A lost
        sequence (a batch given up on after it left: an epoch bump is due, and nothing may leave
        under this epoch any more) makes the transaction abortable; the abort takes the new epoch."""
        if self.idem.bump_wanted and self.state.state in (TxnState.IN_TRANSACTION, TxnState.COMMITTING):
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

        def body(keys: list[str], version: int) -> dict[str, Any]:
            # A new epoch of our own id when one is due (KIP-360: the coordinator checks that we are
            # still the current producer), else the coordinator's choice for the transactional id.
            producer_id, epoch = self.idem.init_ids(version)
            return {
                "transactional_id": self.transactional_id,
                "transaction_timeout_ms": self.transaction_timeout_ms,
                "producer_id": producer_id,
                "producer_epoch": epoch,
            }

        def done(answer: Future[Any]) -> None:
            error = error_of(answer)
            if error is not None:
                if self.idem.bumping and INIT_ERRORS.meaning(error.code()) is InitError.BUMP_REFUSED:
                    # A broker that will not bump (Tansu answers UNKNOWN_SERVER_ERROR) gives the
                    # transactional id a new epoch when asked without our id.
                    self.idem.init_answered(error.code())
                    ask()
                    return
                _settle(fut, error)
                return
            response = answer.result()
            self.idem.set_producer_id(response.producer_id, response.producer_epoch)
            _settle(fut, None)

        def ask() -> None:
            self._call(INIT_PRODUCER_ID, ["init"], body, whole, deadline).future("init").add_done_callback(done)

        self.client.engine.call_soon(ask)
        return fut

    def end(self, commit: bool, deadline: float) -> Future[None]:
        """EndTxn. A commit whose group member lost its partitions before it was answered, on a
        broker without KIP-447 (Kafka < 2.5), asks for an abort instead: that broker would take the
        commit after the member's successor read the offsets it replaces, and the records would be
        copied twice. The coordinator aborts a transaction the commit never reached (commit_transaction
        then fails as abortable, the member's partitions lost), and refuses to abort one it did reach
        (INVALID_TXN_STATE: committed)."""
        fut: Future[None] = Future()
        asked = [commit]  # what the last EndTxn sent asked for

        def body(keys: list[str], version: int) -> dict[str, Any]:
            asked[0] = commit and not self._member_lost
            return {**self._ids(), "committed": asked[0]}

        def done(answer: Future[Any]) -> None:
            error = error_of(answer)
            ended = error is None
            if commit and not asked[0]:  # the commit became an abort
                if error is None:
                    error = _member_lost()
                elif error.code() == ec.INVALID_TXN_STATE:
                    error, ended = None, True  # the commit had reached the coordinator first
            if ended:
                self.added.clear()
                self.offsets_added = False
                GROUP_TRANSACTIONS.ended(self, self._offsets_sent if commit and error is None else None)
                self._offsets_sent = {}
                self._offsets_unchecked = self._member_lost = False
                self._ended += 1
            _settle(fut, None if error is None else as_reported("end transaction", error))

        def send() -> None:
            if not self.added and not self.offsets_added:  # nothing written: no transaction to end
                GROUP_TRANSACTIONS.ended(self)
                _settle(fut, None)
                return
            op = self._call(END_TXN, ["end"], body, whole, deadline, max_version=END_TXN_MAX_VERSION)
            op.future("end").add_done_callback(done)

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

        # KIP-447's member fields exist from v3 (Kafka 2.5); older brokers cannot check them
        member = {"generation_id": generation, "member_id": member_id, "group_instance_id": instance_id}

        def body(keys: list[str], version: int) -> dict[str, Any]:
            self._offsets_unchecked = self._offsets_unchecked or version < 3
            return {
                **self._ids(),
                "group_id": group_id,
                **(member if version >= 3 else {}),
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

        def parse(response: Struct, keys: list[str], node: int | None) -> dict[str, Any]:
            """The first partition error the policy calls final, else the first that asks again."""
            codes = [p.error_code for t in response.topics for p in t.partitions if p.error_code]
            if not codes:
                return dict.fromkeys(keys, response)
            final = [c for c in codes if OFFSETS_POLICY.action(c) is Action.FAIL]
            return dict.fromkeys(keys, KafkaError((final or codes)[0], "committing offsets in the transaction"))

        def committed(answer: Future[Any]) -> None:
            error = error_of(answer)
            if error is None:
                self._offsets_sent.update({(t, p): o for t, parts in offsets.items() for p, o, _e in parts})
            _settle(fut, None if error is None else as_reported("commit offsets to transaction", error))

        def added(answer: Future[Any]) -> None:
            error = error_of(answer)
            if error is not None:
                _settle(fut, as_reported("add offsets to transaction", error))
                return
            self.offsets_added = True  # EndTxn is due even when no record was produced
            op = self._call(
                TXN_OFFSET_COMMIT, [group_id], body, parse, deadline, policy=OFFSETS_POLICY, router=self._to_group
            )
            op.future(group_id).add_done_callback(committed)

        def start() -> None:
            GROUP_TRANSACTIONS.opened(
                self,
                group_id,
                self.transaction_timeout_ms / 1000,
                (member_id, functools.partial(self._fenced_by_group, self._ended)),
            )
            op = self._call(
                ADD_OFFSETS_TO_TXN,
                ["add"],
                lambda keys, version: {**self._ids(), "group_id": group_id},
                whole,
                deadline,
            )
            op.future("add").add_done_callback(added)

        self.client.engine.call_soon(start)
        return fut

    # --- talking to a coordinator ----------------------------------------------------------------

    def _ids(self) -> dict[str, Any]:
        return {
            "transactional_id": self.transactional_id,
            "producer_id": self.idem.producer_id,
            "producer_epoch": self.idem.epoch,
        }

    def _call(
        self,
        api: Api,
        keys: list[Any],
        body: Callable[[list[Any], int], Mapping[str, Any]],
        parse: Parse,
        deadline: float,
        *,
        policy: ErrorPolicy = COORDINATOR,
        router: ToCoordinator | None = None,
        max_version: int | None = None,
    ) -> Operation[Any]:
        """One conversation with the transaction coordinator (or ``router``'s), on the IO thread."""
        return Operation(
            self.client,
            keys,
            api=api,
            router=self._to_transaction if router is None else router,
            body=body,
            parse=parse,
            policy=policy,
            deadline=deadline,
            backoff_ms=self.backoff_ms,
            max_version=max_version,
            request_timeout=self.request_timeout,
        ).start_io()


def _member_lost() -> KafkaError:
    """commit_transaction's error when its commit became an abort (`TransactionManager.end`)."""
    return KafkaError(
        ec.ILLEGAL_GENERATION,
        "the group member lost its partitions while the transaction was committing: it was aborted instead",
        txn_requires_abort=True,
    )


def _settle(fut: Future[None], error: KafkaError | None) -> None:
    if fut.done():
        return
    if error is None:
        fut.set_result(None)
    else:
        fut.set_exception(KafkaException(error))
