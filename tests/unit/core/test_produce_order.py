"""Produce order under every interleaving, sans-IO (issue 39 point 4).

The sender's decisions (core/accumulator.py: what is ready; core/idempotence.py: what may leave,
what an error means; core/produce_verdict.py: what becomes of a failed attempt) are played here
as producer/sender.py plays them, against a model of two brokers sharing one partition's log, with
no network and no clock. Every schedule up to a bound is tried: which node answers next (answers
of one connection come in order, the two nodes' in any order), whether that answer is a success,
NOT_ENOUGH_REPLICAS or NOT_LEADER_OR_FOLLOWER, whether the connection drops after the broker
handled some of its requests (their answers lost), whether the leader moves, when retry backoffs
run out. At the end the log must hold every record once, in produce() order.

The model broker checks for duplicates (a batch whose producer id, epoch and base sequence it
holds is acknowledged, not written again) and for nothing else: like librdkafka's mock cluster
with an idempotent producer, it takes any sequence, so order is the producer's alone to keep. A
batch pipelined behind one that was refused is what the mock wrote ahead of that one's retry.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from kafkawire.core.accumulator import Accumulator, ProducerBatch
from kafkawire.core.idempotence import Idempotence
from kafkawire.core.kafka_error import KafkaError
from kafkawire.core.produce_verdict import ProduceStep, produce_verdict
from kafkawire.producer.pending import PendingMessage
from kafkawire.protocol.error_codes import (
    DUPLICATE_SEQUENCE_NUMBER,
    NOT_ENOUGH_REPLICAS,
    NOT_LEADER_OR_FOLLOWER,
)
from kafkawire.records import NONE

TP = ("t", 0)
NODES = (1, 2)
BACKOFF = 0.05
TRANSPORT = KafkaError._TRANSPORT


@dataclass
class Request:
    batch: ProducerBatch
    node: int


@dataclass
class Broker:
    """The partition's log as the brokers keep it: (producer id, epoch, base sequence, value)."""

    leader: int = 1
    log: list[tuple[int, int, int, bytes]] = field(default_factory=list)

    def append(self, node: int, b: ProducerBatch) -> int:
        if node != self.leader:
            return NOT_LEADER_OR_FOLLOWER
        if any(entry[:3] == b.stamp for entry in self.log):
            return DUPLICATE_SEQUENCE_NUMBER
        # Any other sequence is taken, gaps and all (librdkafka's mock takes them).
        value = b.messages[0].value
        assert value is not None
        self.log.append((*b.stamp, value))
        return 0


class Choices:
    """Replays a prefix of choices, then takes the first option, noting how many there were."""

    def __init__(self, prefix: list[int]) -> None:
        self.prefix = prefix
        self.taken: list[tuple[int, int]] = []  # (choice, options)

    def pick(self, options: int) -> int:
        i = len(self.taken)
        choice = self.prefix[i] if i < len(self.prefix) else 0
        self.taken.append((choice, options))
        return choice


class Producer:
    """The sender's steps for one partition, on the sans-IO parts it uses."""

    def __init__(self, records: int) -> None:
        self.now = 0.0
        self.idem = Idempotence()
        self.idem.init_answered(0, 1000, 0)
        self.acc = Accumulator(
            batch_size=1 << 20, batch_num_messages=1, linger=0.0, compression=NONE, compression_level=None
        )
        for i in range(records):
            self.acc.append(PendingMessage(*TP, None, b"%d" % i, None, 0, None, None, 0.0), 0.0)
        self.in_flight: dict[int, list[Request]] = {node: [] for node in NODES}
        self.reported: list[bytes] = []
        self.given_up: list[str] = []

    def send(self, leader: int) -> None:
        """As Sender.run: while the partition is ready and may send, its head batch leaves."""
        idem = self.idem
        if idem.needs_init and not idem.anything_in_flight():
            idem.init_answered(0, idem.producer_id, idem.epoch + 1)
            idem.restamp(self.acc.stamped_batches())
        while not idem.needs_init and TP in self.acc.ready(self.now)[0] and idem.may_send(TP):
            b = self.acc.pop(TP)
            assert b is not None
            b.close(NONE, None, idem.stamp(b))
            b.attempts += 1
            idem.sent(b)
            self.in_flight[leader].append(Request(b, leader))

    def answered(self, b: ProducerBatch, code: int) -> None:
        """As Sender._delivered / Sender._failed_attempt."""
        idem = self.idem
        if code == 0:
            idem.answered(b)
            self.reported += [m.value for m in b.messages if m.value is not None]
            return
        step, _refresh = produce_verdict(
            code,
            stopped=False,
            idempotent=idem.verdict(b, code),
            transactional=False,
            attempts=b.attempts,
            retries=1_000,
            now=self.now,
            first_queued=0.0,
            delivery_timeout=1e9,
        )
        idem.answered(b)
        if step is ProduceStep.DELIVERED:
            self.reported += [m.value for m in b.messages if m.value is not None]
        elif step is ProduceStep.RESEND:
            self.acc.requeue(b, self.now)
        elif step is ProduceStep.BUMP_AND_RESEND:
            idem.request_bump()
            self.acc.requeue(b, self.now)
        elif step is ProduceStep.RETRY:
            self.acc.requeue(b, self.now + BACKOFF)
        else:  # (the model's retries and timeout never run out: only a broken order ends here)
            self.given_up.append(f"{step.name} after {KafkaError(code).name()}")

    def waiting_retry(self) -> float | None:
        ready, wake = self.acc.ready(self.now)
        return wake if not ready else None


def play(prefix: list[int], records: int, faults: int) -> tuple[Choices, Broker, Producer]:
    choices = Choices(prefix)
    broker = Broker()
    producer = Producer(records)
    budget = faults
    for _ in range(500):
        producer.send(broker.leader)
        # Options: per node with requests in flight, its oldest answered (success or the broker's
        # own verdict), then (within the fault budget) refused, or the connection dropped after
        # the broker handled k of its requests; a leader move; the retry backoff running out.
        options: list[tuple[str, int, int]] = []
        for node in NODES:
            queue = producer.in_flight[node]
            if queue:
                options.append(("answer", node, 0))
                if budget:
                    options += [("refuse", node, NOT_ENOUGH_REPLICAS), ("refuse", node, NOT_LEADER_OR_FOLLOWER)]
                    options += [("drop", node, k) for k in range(len(queue) + 1)]
        if budget:
            options.append(("move", 0, 0))
        wake = producer.waiting_retry()
        if wake is not None:
            options.append(("tick", 0, 0))
        if not options:
            break
        what, node, arg = options[choices.pick(len(options))]
        if what != "answer" and what != "tick":
            budget -= 1
        if what == "answer":
            request = producer.in_flight[node].pop(0)
            producer.answered(request.batch, broker.append(node, request.batch))
        elif what == "refuse":
            request = producer.in_flight[node].pop(0)
            producer.answered(request.batch, arg)
        elif what == "drop":
            lost, producer.in_flight[node] = producer.in_flight[node], []
            for request in lost[:arg]:
                broker.append(node, request.batch)
            for request in lost:
                producer.answered(request.batch, TRANSPORT)
        elif what == "move":
            broker.leader = NODES[broker.leader % len(NODES)]
        else:
            assert wake is not None
            producer.now = wake
    else:
        raise AssertionError(f"no end after 500 steps: {choices.taken}")
    return choices, broker, producer


def schedules(records: int, faults: int):  # type: ignore[no-untyped-def]
    """Every schedule, depth first: each run replays a prefix and takes the first option after it."""
    prefix: list[int] = []
    while True:
        choices, broker, producer = play(prefix, records, faults)
        yield choices, broker, producer
        taken = choices.taken
        while taken and taken[-1][0] + 1 >= taken[-1][1]:
            taken.pop()
        if not taken:
            return
        prefix = [c for c, _n in taken[:-1]] + [taken[-1][0] + 1]


@pytest.mark.parametrize(("records", "faults"), [(3, 3), (4, 3), (6, 2)])
def test_every_interleaving_keeps_produce_order_without_duplicates(records: int, faults: int) -> None:
    expected = [b"%d" % i for i in range(records)]
    played = 0
    for choices, broker, producer in schedules(records, faults):
        played += 1
        where = [c for c, _n in choices.taken]
        assert producer.given_up == [], f"a batch given up, schedule {where}"
        assert not producer.idem.anything_in_flight()
        assert [value for *_, value in broker.log] == expected, f"log out of order or duplicated, schedule {where}"
        assert sorted(producer.reported) == expected, f"each record reported once, schedule {where}"
    assert played > 100  # (the bound explores many schedules, not a handful)
