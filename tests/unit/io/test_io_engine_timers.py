"""The IO engine's timer heap (io/io_engine.py): cancelled timers are shed, live ones still fire
in order. Issue 53's soak: a connection re-arms its one timer at each request, and the cancelled
ones stayed in the heap until due, minutes later."""

from __future__ import annotations

import threading

from kafkawire.io.io_engine import Engine


def test_a_timer_re_armed_at_each_request_leaves_a_bounded_heap_and_the_live_ones_fire_in_order() -> None:
    engine = Engine("test-timers")
    fired: list[int] = []
    done = threading.Event()
    sizes: list[int] = []

    def arm() -> None:
        timer = None
        for _ in range(20_000):  # as io/broker.py's _arm_timer: cancel the last, arm the next
            if timer is not None:
                timer.cancel()
            timer = engine.call_later(300.0, lambda: None)
            sizes.append(len(engine._timers))
        assert timer is not None
        timer.cancel()
        for n in (3, 1, 2):  # live timers among the cancelled: they fire, in their order
            engine.call_later(0.01 * n, lambda n=n: fired.append(n))
        engine.call_later(0.05, done.set)

    try:
        engine.call_soon(arm)
        assert done.wait(10)
        assert max(sizes) <= 512, max(sizes)
        assert fired == [1, 2, 3]
    finally:
        engine.stop()
