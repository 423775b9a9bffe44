"""poll()'s PollTake and PollReady: the C take (native_c/poll_take.c) against its pure-Python twin
(consumer/poll_take.py), over the same fetch tables and the same sequences of takes: the same
records in the same order, the same rows afterwards (position, leader epoch, buffered count, the
chunks' progress), the same turn, and the same stored offsets. The twin is the fetch engine's
take_one plus the offset store, so the C one must leave the table as that path would. PollReady,
the gate in front of it and the engine state it reads (native_c/poll_ready.c), is held against its
twin (consumer/poll_ready.py) over the same states."""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest

from kafkawire.base.model import Message
from kafkawire.client.committed_offsets import Committed
from kafkawire.consumer.consumer import Consumer
from kafkawire.consumer.decode import offset_at
from kafkawire.consumer.fetch_engine import FetchEngine
from kafkawire.consumer.poll_ready import PollReady
from kafkawire.consumer.poll_take import PollTake
from kafkawire.core.fetch_positions import FetchTable
from kafkawire.core.fetch_rows import Chunk, FetchLimits
from kafkawire.core.kafka_error import KafkaError
from kafkawire.native import native
from kafkawire.records.types import RecordBatch

needs_native = pytest.mark.skipif(native is None, reason="the C extension is not built or switched off")

TOPIC = "t"


def batch(base: int, count: int, epoch: int) -> RecordBatch:
    return RecordBatch(base, 100, epoch, 2, 0, 0, count - 1, 0, 0, -1, -1, -1, [])


def messages(partition: int, base: int, count: int, epoch: int) -> list[Message]:
    return [
        Message(
            TOPIC, partition, base + i, None, b"v%d" % i, timestamp=(0, 1), leader_epoch=epoch if epoch >= 0 else None
        )
        for i in range(count)
    ]


class Side:
    """One fetch engine's table and lock with one PollTake over them (C or twin)."""

    def __init__(self, make: Callable[..., Any], lock: Callable[[], Any], rows: int, store: bool) -> None:
        engine = FetchEngine.__new__(FetchEngine)  # the take path alone: no client, no IO
        engine._held = deque()
        engine._lock = lock()
        engine._table = FetchTable(FetchLimits(), offset_at)
        engine._columnar = None
        self.wakes = 0
        engine._wake = self._woken  # type: ignore[method-assign]
        self.engine = engine
        self.table = engine._table
        for p in range(rows):
            self.table.assign((TOPIC, p), 0)
        self.stored: dict[Any, Committed] | None = {} if store else None
        self.take = make(engine._lock, self.table, engine._held, engine.take_one, lock(), self.stored, Chunk, Committed)

    def _woken(self) -> None:
        self.wakes += 1

    def add(self, partition: int, base: int, count: int, epoch: int) -> None:
        part = self.table.parts[(TOPIC, partition)]
        self.table.add(
            part, [(batch(base, count, epoch), messages(partition, base, count, epoch))], base + count, -1, -1
        )

    def event(self, partition: int) -> None:
        part = self.table.parts[(TOPIC, partition)]
        self.table.failed(part, KafkaError(KafkaError._TRANSPORT, "gone"), 0.0, True)

    def state(self) -> Any:
        rows = [
            (
                p.key,
                p.position,
                p.leader_epoch,
                p.buffered_records,
                p.buffered_bytes,
                [getattr(c, "pos", None) for c in p.buffer],
            )
            for p in self.table.parts.values()
        ]
        return rows, self.table._turn, self.table.starved, self.stored, self.wakes


def seen(m: Any) -> Any:
    if m is None:
        return None
    return (
        m.topic(),
        m.partition(),
        m.offset(),
        m.value(),
        m.leader_epoch(),
        None if m.error() is None else m.error().code(),
    )


def both(rows: int, store: bool) -> tuple[Side, Side]:
    assert native is not None
    return Side(native.PollTake, native.RLock, rows, store), Side(PollTake, threading.Lock, rows, store)


def run(sides: tuple[Side, Side], steps: list[Callable[[Side], None]], takes: int) -> list[Any]:
    """Each step on both sides, then ``takes`` takes; what each take gave, compared as it goes."""
    got = []
    for step in steps:
        for side in sides:
            step(side)
    for _ in range(takes):
        c, py = (seen(side.take()) for side in sides)
        assert c == py
        assert sides[0].state() == sides[1].state()
        got.append(c)
    return got


@needs_native
@pytest.mark.parametrize("store", [True, False])
@pytest.mark.parametrize("rows", [1, 2, 4])
def test_records_across_rows_and_chunks(rows: int, store: bool) -> None:
    steps = []
    for p in range(rows):
        steps += [lambda s, p=p: s.add(p, 0, 3, 5), lambda s, p=p: s.add(p, 3, 1, -1), lambda s, p=p: s.add(p, 4, 2, 7)]
    got = run(both(rows, store), steps, 6 * rows + 2)
    assert [g for g in got if g is not None] and got[-1] is None  # all handed over, then nothing
    assert sorted(g[:3] for g in got if g is not None) == sorted((TOPIC, p, o) for p in range(rows) for o in range(6))


@needs_native
def test_paused_and_empty_rows_and_events() -> None:
    sides = both(3, True)
    steps: list[Callable[[Side], None]] = [
        lambda s: s.add(0, 0, 4, 1),
        lambda s: s.add(2, 10, 4, 2),
        lambda s: s.table.pause((TOPIC, 2), True),
        lambda s: s.event(0),
        lambda s: s.add(0, 4, 3, 1),
    ]
    run(sides, steps, 4)
    run(sides, [lambda s: s.table.pause((TOPIC, 2), False)], 12)


@needs_native
def test_many_rows_few_holding_records_arriving_between_takes() -> None:
    """Hundreds of rows assigned, a few far apart holding records: the turn walks only the rows
    holding something (FetchTable._next_row lists them anew past SKIPPED_ROWS empty ones, the C take
    leaves that to it), and rows that get records or an event, or are resumed, between takes are
    served all the same: each batch of takes hands over everything takeable, then nothing."""
    sides = both(200, True)

    def taken(got: list[Any]) -> list[tuple[Any, ...]]:
        assert got[-1] is None
        return sorted(g[:3] for g in got if g is not None and g[5] is None)

    got = run(sides, [lambda s: s.add(3, 0, 5, 1), lambda s: s.add(150, 0, 5, 1), lambda s: s.add(199, 0, 2, 1)], 6)
    got += run(sides, [lambda s: s.table.pause((TOPIC, 150), True)], 10)
    assert [g for g in got if g is not None and g[1] == 150] == [g for g in got[:6] if g is not None and g[1] == 150]
    assert taken(got) == sorted(
        [(TOPIC, 3, o) for o in range(5)]
        + [(TOPIC, 199, o) for o in range(2)]
        + [g[:3] for g in got[:6] if g is not None and g[1] == 150]
    )
    later = run(sides, [lambda s: s.add(40, 0, 3, 1), lambda s: s.add(0, 0, 2, 1)], 6)
    assert taken(later) == sorted([(TOPIC, 40, o) for o in range(3)] + [(TOPIC, 0, o) for o in range(2)])
    last = run(sides, [lambda s: s.table.pause((TOPIC, 150), False), lambda s: s.event(77)], 8)
    assert [g[1] for g in last if g is not None and g[5] is not None] == [77]
    assert len(taken(last)) + len([g for g in got[:6] if g is not None and g[1] == 150]) == 5


@needs_native
def test_held_events_come_first() -> None:
    sides = both(2, True)
    event = Message(TOPIC, 0, None, error=KafkaError(KafkaError._TRANSPORT, "held"))
    run(sides, [lambda s: s.add(0, 0, 3, 0), lambda s: s.add(1, 0, 3, 0), lambda s: s.engine._held.append(event)], 8)


@needs_native
def test_a_held_fetch_lock_takes_the_slow_path() -> None:
    """Another thread holding the fetch lock: the C take waits in the slow path, as the twin does."""
    c, py = both(1, True)
    for side in (c, py):
        side.add(0, 0, 3, 0)
    held, done = threading.Event(), threading.Event()

    def hold() -> None:
        with c.engine._lock:
            held.set()
            done.wait(0.05)

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait()
    try:
        assert seen(c.take()) == seen(py.take())
    finally:
        holder.join()
    assert c.state() == py.state()


@needs_native
def test_refuses_what_it_cannot_take() -> None:
    assert native is not None
    with pytest.raises(TypeError):
        native.PollTake(threading.Lock(), None, deque(), print, native.RLock(), {}, Chunk, Committed)
    with pytest.raises(TypeError):
        native.PollTake(native.RLock(), None, deque(), print, native.RLock(), [], Chunk, Committed)
    with pytest.raises(TypeError, match="_rows is not a slot"):  # the table's turn is read at its slots' offsets
        native.PollTake(native.RLock(), Unslotted(), deque(), print, native.RLock(), {}, Chunk, Committed)


class Unslotted:
    """A table whose ``_rows`` and ``_turn`` are no slots."""

    _rows = None
    _turn = 0


REPORT = Message(TOPIC, 0, 7, None, b"v")
FIELDS = {"closed", "rejoin_due", "polled_at", "subscription"}


def gates() -> list[Any]:
    return [PollReady] + ([native.PollReady] if native is not None else [])


class Gate:
    """One PollReady (C or twin) over its own callback queue, events and take."""

    def __init__(self, kind: Any) -> None:
        self.waiting: deque[Any] = deque()
        self.events: deque[Any] = deque()
        self.taken = 0
        self.ready = kind(self.waiting, self.events, self._take)

    def _take(self) -> Any:
        self.taken += 1
        return REPORT


class SlottedSubscription:
    """A subscription as consumer/rebalance.py's: ``left_for_poll`` a slot (the C gate reads its offset)."""

    __slots__ = ("left_for_poll",)

    def __init__(self, left: Any) -> None:
        self.left_for_poll = left


GATE_STATES = [
    "nothing",
    "queued callback",
    "event",
    "rejoin due",
    "left for poll",
    "subscribed",
    "left for poll, a slot",
    "subscribed, a slot",
    "left for poll, a slot holding 1",
    "subscribed, a slot holding 0",
    "closed",
]
TAKES = {"nothing", "subscribed", "subscribed, a slot", "subscribed, a slot holding 0", "closed"}


def set_gate(gate: Gate, state: str) -> None:
    if state == "queued callback":
        gate.waiting.append(object())
    elif state == "event":
        gate.events.append(object())
    elif state == "rejoin due":
        gate.ready.rejoin_due = True
    elif state in ("left for poll", "subscribed"):
        gate.ready.subscription = SimpleNamespace(left_for_poll=state == "left for poll")
    elif state.endswith("a slot"):
        gate.ready.subscription = SlottedSubscription(state.startswith("left"))
    elif state.endswith(("holding 1", "holding 0")):  # not a bool: read as the twin reads it
        gate.ready.subscription = SlottedSubscription(int(state[-1]))
    elif state == "closed":
        gate.ready.closed = True  # the face's check, not the gate's: it still takes


@needs_native
@pytest.mark.parametrize("state", GATE_STATES)
def test_ready_gate_is_its_twin(state: str) -> None:
    got = []
    for kind in gates():
        gate = Gate(kind)
        gate.ready.polled_at = 0.0
        set_gate(gate, state)
        before = time.monotonic()
        m = gate.ready()
        got.append((m, gate.taken, gate.ready.polled_at >= before))
    assert got[0] == got[1]
    assert got[0] == ((REPORT, 1, True) if state in TAKES else (None, 0, False))


@needs_native
@pytest.mark.parametrize("state", GATE_STATES)
def test_a_gate_state_undone_takes_again(state: str) -> None:
    """The engine moves the shared fields back (a rejoin served, the queue drained): the gate reads them anew."""
    got = []
    for kind in gates():
        gate = Gate(kind)
        set_gate(gate, state)
        first = gate.ready()
        gate.waiting.clear()
        gate.events.clear()
        gate.ready.rejoin_due = False
        sub = gate.ready.subscription
        if sub is not None:  # the same subscription, back from the poll interval: read again at its offset
            sub.left_for_poll = False
        got.append((first, gate.ready(), gate.taken))
    assert got[0] == got[1]


@needs_native
def test_the_gate_reads_a_subscription_of_each_shape() -> None:
    """The C gate learns a subscription type's slot; another type after it (or back) is read right."""
    got = []
    for kind in gates():
        gate = Gate(kind)
        seen = []
        for sub in (SlottedSubscription(False), SimpleNamespace(left_for_poll=True), SlottedSubscription(True)):
            gate.ready.subscription = sub
            seen.append(gate.ready())
        seen.append(gate.taken)
        got.append(seen)
    assert got[0] == got[1] == [REPORT, None, None, 1]


@pytest.mark.parametrize("kind", gates())
def test_the_gate_fields_start_open_and_hold_what_is_set(kind: Any) -> None:
    before = time.monotonic()
    ready = kind(deque(), deque(), lambda: None)
    assert (ready.closed, ready.rejoin_due, ready.subscription) == (False, False, None)
    assert before <= ready.polled_at <= time.monotonic()
    sub = SimpleNamespace(left_for_poll=False)
    ready.closed, ready.rejoin_due, ready.polled_at, ready.subscription = True, True, 12.5, sub
    assert (ready.closed, ready.rejoin_due, ready.polled_at, ready.subscription) == (True, True, 12.5, sub)
    with pytest.raises(AttributeError):
        ready.other = 1
    del ready.subscription
    with pytest.raises(AttributeError):
        ready()  # as reading the twin's unset slot


def test_twin_and_native_gate_declare_the_same_fields() -> None:
    assert {name for name in PollReady.__slots__ if not name.startswith("_")} == FIELDS
    if native is not None:
        assert {name for name in FIELDS if hasattr(native.PollReady, name)} == FIELDS


@needs_native
def test_native_gate_refuses_what_it_cannot_hold() -> None:
    assert native is not None
    ready = native.PollReady(deque(), deque(), lambda: None)
    with pytest.raises(TypeError):
        ready.closed = 1  # a bool: the face's check reads it as a C flag
    with pytest.raises(TypeError):
        ready.polled_at = "now"
    assert (ready.closed, ready.rejoin_due) == (False, False)


def test_the_engine_keeps_its_state_in_its_gate() -> None:
    """What the engine reads and moves (closed, a rejoin due, the subscription, the last poll) is the
    gate's: what poll()'s C path reads from the face's ``_ready`` is the engine's own state."""
    consumer = Consumer({"group.id": "g", "bootstrap.servers": "127.0.0.1:1"})
    try:
        engine = consumer._engine
        assert engine is not None and consumer._ready is engine.ready
        assert type(engine.ready) is (PollReady if native is None else native.PollReady)
        assert not engine.closed
        polled = engine.ready.polled_at
        assert consumer.poll(0) is None and engine.ready.polled_at >= polled
    finally:
        consumer.close()
    assert engine.closed and engine.ready.closed
