"""Driving a FetchEngine in tests: its configuration and waits on what take() hands over."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from kafkawire.base.model import Message
from kafkawire.client.network_client import Client
from kafkawire.consumer.fetch_engine import FetchEngine

# librdkafka's defaults for the options the engine reads
DEFAULTS: dict[str, Any] = {
    "fetch.min.bytes": 1,
    "fetch.wait.max.ms": 500,
    "fetch.max.bytes": 52_428_800,
    "max.partition.fetch.bytes": 1_048_576,
    "fetch.error.backoff.ms": 500,
    "queued.min.messages": 100_000,
    "queued.max.messages.kbytes": 65_536,
    "enable.partition.eof": False,
    "check.crcs": False,
    "client.rack": None,
}


@dataclass(frozen=True)
class EngineSettings:
    """The engine's view of a consumer configuration (what ConsumerConfig offers)."""

    options: Mapping[str, Any] = field(default_factory=lambda: dict(DEFAULTS))
    group_id: str | None = None
    auto_offset_reset: str = "earliest"
    read_committed: bool = False


def settings(
    group_id: str | None = None, reset: str = "earliest", read_committed: bool = False, **options: Any
) -> EngineSettings:
    opts = dict(DEFAULTS)
    opts.update({k.replace("_", "."): v for k, v in options.items()})
    return EngineSettings(opts, group_id, reset, read_committed)


class Taker:
    """A FetchEngine with its client, and waits on what take() hands over."""

    def __init__(self, bootstrap: str, config: EngineSettings, **client_conf: Any) -> None:
        self.ready = threading.Event()
        self.ready_calls = 0
        self.client = Client({"bootstrap.servers": bootstrap, **client_conf})
        self.engine = FetchEngine(self.client, config, self._on_ready)

    def _on_ready(self) -> None:
        self.ready_calls += 1
        self.ready.set()

    def take(self, count: int, timeout: float = 30.0, chunk: int = 500, errors: bool = False) -> list[Message]:
        """Exactly ``count`` messages (events included when ``errors``), or fail after ``timeout``."""
        out: list[Message] = []
        deadline = time.monotonic() + timeout
        while len(out) < count:
            self.ready.clear()
            got = self.engine.take(min(chunk, count - len(out)))
            for m in got:
                if m.error() is not None and not errors:
                    raise AssertionError(f"unexpected event {m.error()}")
            out.extend(got)
            if not got:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"took {len(out)} of {count} in {timeout} s")
                self.ready.wait(min(left, 0.5))
        return out

    def quiet(self, seconds: float) -> list[Message]:
        """Whatever comes within ``seconds`` (expected: nothing)."""
        out: list[Message] = []
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.ready.clear()
            out.extend(self.engine.take(1000))
            self.ready.wait(0.05)
        return out

    def until(self, predicate: Callable[[], bool], timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                raise AssertionError("condition not reached in time")
            time.sleep(0.02)

    def close(self) -> None:
        self.engine.close()
        self.client.close()


@contextmanager
def taker(bootstrap: str, config: EngineSettings | None = None, **client_conf: Any) -> Iterator[Taker]:
    t = Taker(bootstrap, config or settings(), **client_conf)
    try:
        yield t
    finally:
        t.close()
