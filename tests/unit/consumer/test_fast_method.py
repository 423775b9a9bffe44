"""FastMethod (native_c/fast_method.c): a method whose call tries a C path before the Python method
it wraps. Consumer.poll is one (the path: poll_take.c's poll_fast, which takes a ready record and
otherwise the engine's wait); here it is held against its twin, the Python poll() itself, over
every call form and every state of the engine it reads: the same result or the same exception, the
same records taken and the same waits asked of the engine.
(Producer.produce's path is held against the Python produce() in test_produce_lane.py.)"""

from __future__ import annotations

import functools
import inspect
from collections import deque
from types import SimpleNamespace
from typing import Any

import pytest

from kafkawire.base.model import Message
from kafkawire.consumer.consumer import Consumer
from kafkawire.consumer.consumer_engine import ConsumerClosedError
from kafkawire.consumer.poll_ready import PollReady
from kafkawire.native import native

needs_native = pytest.mark.skipif(native is None, reason="the C extension is not built or switched off")

# The Python poll(): Consumer.poll itself without the extension, else the function it wraps.
PYTHON_POLL = getattr(Consumer.poll, "__wrapped__", Consumer.poll)

RECORD = Message("t", 0, 7, None, b"v")
WAITED = Message("t", 0, 8, None, b"w")


class Engine:
    """What poll() reads of the consumer's engine: ``closed`` and ``ready`` (its gate, a PollReady of
    ``kind``, whose state the engine keeps there) and ``consume``."""

    def __init__(self, state: str, kind: Any) -> None:
        self.records: deque[Message] = deque([] if state in ("nothing ready", "wait fails") else [RECORD])
        self.waits: list[tuple[int, Any]] = []
        self.fails = state == "take fails"
        self.wait_fails = state == "wait fails"
        self.waiting: deque[Any] = deque([print] if state == "callback queued" else [])
        self.events: deque[Any] = deque([RECORD] if state == "event" else [])
        self.ready = kind(self.waiting, self.events, self._take)
        self.ready.closed = state == "closed"
        self.ready.rejoin_due = state == "rejoin due"
        if state in ("left for poll", "subscribed"):
            self.ready.subscription = SimpleNamespace(left_for_poll=state == "left for poll")

    @property
    def closed(self) -> bool:
        return self.ready.closed

    def _take(self) -> Message | None:
        if self.fails:
            raise ValueError("the take failed")
        return self.records.popleft() if self.records else None

    def consume(self, count: int, timeout: Any) -> list[Message]:
        if self.wait_fails:
            raise RuntimeError("the wait failed")
        if timeout is not None and not isinstance(timeout, (int, float)):
            raise TypeError("a timeout is a number")
        self.waits.append((count, timeout))
        return [] if timeout == 0 else [WAITED]  # poll(0): nothing came


class Face:
    """A consumer as poll() sees it, laid out as Consumer: its ``_engine`` and, in a slot, its
    engine's gate (unset when there is no engine, as for a subclass whose __init__ did not run)."""

    __slots__ = ("__dict__", "_ready")
    _engine: Engine | None = None

    def __init__(self, engine: Engine | None) -> None:
        if engine is not None:
            self._engine = engine
            self._ready = engine.ready


class TwinFace(Face):
    poll = PYTHON_POLL


STATES = [
    "ready",
    "nothing ready",
    "closed",
    "no engine",
    "take fails",
    "callback queued",
    "event",
    "rejoin due",
    "left for poll",
    "subscribed",
    "wait fails",
]
FORMS: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {
    "no timeout": ((), {}),
    "timeout": ((1.5,), {}),
    "int timeout": ((0,), {}),
    "None timeout": ((None,), {}),
    "keyword timeout": ((), {"timeout": 0.5}),
    "timeout not a number": (("soon",), {}),
    "an argument too many": ((1.0, 2), {}),
    "timeout twice": ((1.0,), {"timeout": 2.0}),
    "unknown keyword": ((), {"wait": 1.0}),
    "two keywords": ((), {"timeout": 1.0, "wait": 1.0}),
}


def outcome(call: Any, *args: Any, **kwargs: Any) -> tuple[str, Any]:
    """What ``call(*args, **kwargs)`` gave: its result, or its exception's class and arguments."""
    try:
        return "returned", call(*args, **kwargs)
    except Exception as e:
        return type(e).__name__, e.args


def side(face_type: type[Face], state: str, kind: Any, form: str) -> Any:
    """poll() called by instance and by class on a fresh face of ``face_type``: the outcomes and what
    the engine was left with (records not taken, waits asked, the gate stamped)."""
    args, kwargs = FORMS[form]
    got = []
    for call_by_class in (False, True):
        engine = None if state == "no engine" else Engine(state, kind)
        face = face_type(engine)
        stamp = 0.0
        if engine is not None:
            engine.ready.polled_at = stamp
        call = functools.partial(face_type.poll, face) if call_by_class else face.poll
        result = outcome(call, *args, **kwargs)
        left = None if engine is None else (list(engine.records), engine.waits, engine.ready.polled_at > stamp)
        got.append((result, left))
    return got


@needs_native
@pytest.mark.parametrize("form", list(FORMS))
@pytest.mark.parametrize("state", STATES)
def test_poll_through_c_is_the_python_poll(state: str, form: str) -> None:
    """The C path over the C gate against the Python poll() over the twin gate."""
    assert native is not None

    class CFace(Face):
        poll = native.FastMethod(PYTHON_POLL, "poll")

    assert side(CFace, state, native.PollReady, form) == side(TwinFace, state, PollReady, form)


@needs_native
@pytest.mark.parametrize("state", ["ready", "nothing ready", "closed", "callback queued"])
def test_a_face_the_c_path_cannot_read_goes_the_python_way(state: str) -> None:
    """A face whose gate is the twin, or whose ``_ready`` is not the slot (a subclass shadowing it),
    or a type without it: the Python poll() takes the call, with the same outcome."""
    assert native is not None

    class CFace(Face):
        poll = native.FastMethod(PYTHON_POLL, "poll")

    class Shadowed(CFace):
        _ready = None  # type: ignore[assignment]

    class Plain:  # no slot at all: _engine alone, as a face before this layout
        poll = native.FastMethod(PYTHON_POLL, "poll")
        _ready = None

        def __init__(self, engine: Engine | None) -> None:
            self._engine = engine

    want = side(TwinFace, state, PollReady, "timeout")
    assert side(CFace, state, PollReady, "timeout") == want
    assert side(Shadowed, state, native.PollReady, "timeout") == want
    assert side(Plain, state, native.PollReady, "timeout") == want  # type: ignore[arg-type]
    assert side(CFace, state, native.PollReady, "timeout") == want  # the face type learned again


def test_a_closed_gate_makes_the_c_path_decline() -> None:
    """Closing after records were taken (the engine sets its gate's ``closed``): the next poll() raises."""
    engine = Engine("ready", PollReady if native is None else native.PollReady)
    engine.records.append(WAITED)
    consumer = Consumer.__new__(Consumer)
    consumer._engine = engine  # type: ignore[assignment]
    consumer._ready = engine.ready
    assert consumer.poll(0) is RECORD
    engine.ready.closed = True
    with pytest.raises(ConsumerClosedError):
        consumer.poll(0)
    assert list(engine.records) == [WAITED]


@needs_native
def test_a_closed_consumer_refuses_through_the_c_path() -> None:
    c = Consumer.__new__(Consumer)  # __init__ never ran: closed, as confluent-kafka's
    with pytest.raises(ConsumerClosedError) as raised:
        c.poll(0)
    assert raised.value.args == ("Consumer closed",)


def test_poll_keeps_its_signature_and_docstring() -> None:
    assert list(inspect.signature(Consumer.poll).parameters) == ["self", "timeout"]
    assert Consumer.poll.__doc__ and "one message or event" in Consumer.poll.__doc__
    assert Consumer.poll.__name__ == "poll"
    if native is not None:
        assert type(Consumer.poll) is native.FastMethod


@needs_native
def test_a_fast_method_needs_a_function_and_a_known_path() -> None:
    assert native is not None
    with pytest.raises(TypeError):
        native.FastMethod(None, "poll")
    with pytest.raises(ValueError, match="no C path named flush"):
        native.FastMethod(PYTHON_POLL, "flush")
