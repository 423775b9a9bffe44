"""FastMethod (native_c/fast_method.c): a method whose call tries a C path before the Python method
it wraps. Consumer.poll is one (the path: poll_take.c's poll_fast, which takes a ready record and
otherwise the engine's wait); here it is held against its twin, the Python poll() itself, over
every call form and every state of the engine it reads: the same result or the same exception, the
same records taken and the same waits asked of the engine.
(Producer.produce's path is held against the Python produce() in test_produce_lane.py.)"""

from __future__ import annotations

import inspect
from collections import deque
from typing import Any

import pytest

from kafkawire.base.model import Message
from kafkawire.consumer.consumer import Consumer
from kafkawire.consumer.consumer_engine import ConsumerClosedError
from kafkawire.native import native

needs_native = pytest.mark.skipif(native is None, reason="the C extension is not built or switched off")

# The Python poll(): Consumer.poll itself without the extension, else the function it wraps.
PYTHON_POLL = getattr(Consumer.poll, "__wrapped__", Consumer.poll)

RECORD = Message("t", 0, 7, None, b"v")
WAITED = Message("t", 0, 8, None, b"w")


class Engine:
    """What poll() reads of the consumer's engine: ``closed``, ``take_ready`` and ``consume``."""

    def __init__(self, state: str) -> None:
        self.closed = state == "closed"
        self.ready: deque[Message] = deque([RECORD] if state in ("ready", "gate", "gate busy") else [])
        self.waits: list[tuple[int, Any]] = []
        self.fails = state == "take fails"
        self.wait_fails = state == "wait fails"
        self.take_ready: Any = self._take_ready
        if state in ("gate", "gate busy"):  # the C gate in front of the take, as the consumer engine has it
            assert native is not None
            self.executor_waiting: deque[Any] = deque([print] if state == "gate busy" else [])
            self._events: deque[Any] = deque()
            self._rejoin_due = False
            self._subscription = None
            self.polled_at = 0.0
            self.take_ready = native.PollReady(self, self.executor_waiting, self._events, self._take)

    def _take(self) -> Message | None:
        return self.ready.popleft() if self.ready else None

    def _take_ready(self) -> Message | None:
        if self.fails:
            raise ValueError("the take failed")
        return self._take()

    def consume(self, count: int, timeout: Any) -> list[Message]:
        if self.wait_fails:
            raise RuntimeError("the wait failed")
        if timeout is not None and not isinstance(timeout, (int, float)):
            raise TypeError("a timeout is a number")
        self.waits.append((count, timeout))
        return [] if timeout == 0 else [WAITED]  # poll(0): nothing came


class Face:
    """A consumer as poll() sees it: its ``_engine``."""

    def __init__(self, engine: Engine | None) -> None:
        self._engine = engine


class TwinFace(Face):
    poll = PYTHON_POLL


STATES = ["ready", "nothing ready", "closed", "no engine", "take fails", "gate", "gate busy", "wait fails"]
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


@needs_native
@pytest.mark.parametrize("form", list(FORMS))
@pytest.mark.parametrize("state", STATES)
def test_poll_through_c_is_the_python_poll(state: str, form: str) -> None:
    assert native is not None

    class CFace(Face):
        poll = native.FastMethod(PYTHON_POLL, "poll")

    args, kwargs = FORMS[form]
    got = []
    for face_type in (TwinFace, CFace):
        engine = None if state == "no engine" else Engine(state)
        face = face_type(engine)
        by_instance = outcome(face.poll, *args, **kwargs)
        by_class = outcome(face_type.poll, face, *args, **kwargs)
        left = None if engine is None else (list(engine.ready), engine.waits)
        got.append((by_instance, by_class, left))
    assert got[0] == got[1]


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
