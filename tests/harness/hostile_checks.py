"""What every hostile-peer test checks, shared by tests/broker/test_hostile_*.py.

* `Reports` collects delivery reports and says which records got none or more than one;
* `outcome` runs a client call and sorts what came out: a result, a `KafkaException` carrying a
  `KafkaError` with a code, or anything else (a builtin exception escaping: always a failure);
* `hostile_tansu` is the fixture body: one Tansu behind one `HostileProxy` per test module;
* `child_rss` runs a client in a subprocess and reports how much its memory grew.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafkawire import KafkaError, KafkaException
from kafkawire.base.model import Message
from kafkawire.local_broker import TansuBroker
from tests.harness.hostile import HostileProxy

ROOT = Path(__file__).resolve().parents[2]

# Options that make a client find out fast and come back fast: every hostile test uses them.
FAST = {
    "reconnect.backoff.ms": 10,
    "reconnect.backoff.max.ms": 200,
    "retry.backoff.ms": 20,
    "retry.backoff.max.ms": 200,
    "socket.timeout.ms": 3_000,
    "socket.connection.setup.timeout.ms": 3_000,
}


def hostile_tansu() -> Iterator[tuple[TansuBroker, HostileProxy]]:
    with HostileProxy() as proxy, TansuBroker(advertised_port=proxy.port) as broker:
        proxy.start(broker.host, broker.port)
        yield broker, proxy
        assert not proxy.fault_errors, f"a fault of the test itself raised: {proxy.fault_errors!r}"


@dataclass
class Reports:
    """Delivery reports by record value (each record's value is unique in a test)."""

    sent: list[bytes] = field(default_factory=list)
    reports: Counter[bytes] = field(default_factory=Counter)
    errors: dict[bytes, KafkaError] = field(default_factory=dict)
    bad_errors: list[str] = field(default_factory=list)  # a report whose error is not a KafkaError
    lock: threading.Lock = field(default_factory=threading.Lock)
    counter: int = 0

    def callback(self, err: KafkaError | None, msg: Message) -> None:
        value = msg.value() or b""
        with self.lock:
            self.reports[value] += 1
            if err is not None:
                self.errors[value] = err
                if not isinstance(err, KafkaError):
                    self.bad_errors.append(repr(err))

    def next_value(self, tag: str = "v") -> bytes:
        with self.lock:
            self.counter += 1
            value = f"{tag}-{self.counter}".encode()
        self.sent.append(value)
        return value

    def unreported(self) -> list[bytes]:
        with self.lock:
            return [v for v in self.sent if self.reports[v] == 0]

    def duplicated(self) -> list[bytes]:
        with self.lock:
            return [v for v, n in self.reports.items() if n > 1]

    def delivered(self, value: bytes) -> bool:
        with self.lock:
            return self.reports[value] == 1 and value not in self.errors

    def wait_all(self, timeout: float) -> bool:
        """True once every record sent has a report (poll() must be driven by the caller's face)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.unreported():
                return True
            time.sleep(0.02)
        return not self.unreported()


@dataclass(frozen=True)
class Outcome:
    """What a call gave: ``value``, or ``error`` (a KafkaError), or ``escaped`` (anything else)."""

    value: Any = None
    error: KafkaError | None = None
    escaped: BaseException | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.escaped is None


def outcome(call: Callable[[], Any]) -> Outcome:
    """Run ``call`` and sort its result. A KafkaException must carry a KafkaError with a code."""
    try:
        return Outcome(value=call())
    except KafkaException as exc:
        err = exc.args[0] if exc.args else None
        if isinstance(err, KafkaError) and isinstance(err.code(), int):
            return Outcome(error=err)
        return Outcome(escaped=exc)
    except Exception as exc:
        return Outcome(escaped=exc)


def escaped_repr(result: Outcome) -> str:
    exc = result.escaped
    return "" if exc is None else f"{type(exc).__module__}.{type(exc).__qualname__}: {exc}"


def child_rss(
    scenario: str, args: dict[str, Any], timeout: float = 240.0, env: dict[str, str] | None = None
) -> dict[str, Any]:
    """Run ``scenario`` of tests/harness/hostile_child.py in a fresh interpreter; its JSON report
    (``baseline_kb``, ``peak_kb``, ``outcome`` ...) plus ``returncode`` and ``stderr_tail``."""
    env = dict(os.environ, **(env or {}))
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run(
        [sys.executable, "-m", "tests.harness.hostile_child", scenario, json.dumps(args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        env=env,
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    report: dict[str, Any] = json.loads(lines[-1]) if lines else {}
    report["returncode"] = proc.returncode
    report["stderr_tail"] = proc.stderr[-2000:]
    return report
