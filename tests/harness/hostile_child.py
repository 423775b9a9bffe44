"""Client runs in a fresh interpreter, for what a test cannot see from inside its own process: how
much memory a hostile answer makes the client take, pure-Python mode, and interpreter exit.

``python -m tests.harness.hostile_child SCENARIO JSON_ARGS`` prints one JSON line: ``baseline_kb``
(resident memory once the client is up), ``peak_kb`` (the high-water mark at the end), ``outcome``
("ok", "KafkaError <name>: <text>" or "escaped <type>: <text>") and scenario fields. The address
space is capped (``as_limit_mb`` above the baseline) so that a bomb that is not bounded fails here
with MemoryError instead of taking the machine's memory.
"""

from __future__ import annotations

import json
import resource
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from kafkawire import KafkaError, KafkaException, Producer
from kafkawire.client.network_client import Client
from kafkawire.range_reader import FetchSettings, fetch_range


def _status_kb(field: str) -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def _cap_address_space(extra_mb: int) -> None:
    limit = (_status_kb("VmSize") + extra_mb * 1024) * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _describe(call: Callable[[], Any]) -> tuple[str, Any]:
    try:
        return "ok", call()
    except KafkaException as exc:
        err = exc.args[0] if exc.args else None
        if isinstance(err, KafkaError):
            return f"KafkaError {err.name()}: {err.str()}"[:500], None
        return f"escaped KafkaException without a KafkaError: {exc!r}"[:500], None
    except BaseException as exc:  # MemoryError included: that is what the test wants to see
        return f"escaped {type(exc).__name__}: {exc}"[:500], None


def list_topics(args: dict[str, Any], report: dict[str, Any]) -> None:
    """A producer asks for metadata (the parent's peer may answer with a bomb)."""
    producer = Producer({"bootstrap.servers": args["bootstrap"], **args.get("conf", {})})
    try:
        report["baseline_kb"] = _status_kb("VmRSS")
        _cap_address_space(args.get("as_limit_mb", 1536))
        deadline = time.monotonic() + args.get("seconds", 10)
        outcomes = []
        brokers = []  # brokers each answer that came through listed
        while time.monotonic() < deadline:
            text, md = _describe(lambda: producer.list_topics(args.get("topic"), timeout=3))
            outcomes.append(text)
            if md is not None:
                brokers.append(len(md.brokers))
            if text == "ok" and args.get("until_ok", True):
                break
        report["brokers"] = brokers
        report["outcome"] = outcomes[-1] if outcomes else "no call made"
        report["outcomes"] = sorted(set(outcomes))
        report["threads"] = threading.active_count()
    finally:
        producer.close(10)


def fetch(args: dict[str, Any], report: dict[str, Any]) -> None:
    """fetch_range to the log end, counting records without keeping them."""
    client = Client({"bootstrap.servers": args["bootstrap"], **args.get("conf", {})})
    try:
        client.refresh_metadata([args["topic"]], timeout=10).result(11)
        report["baseline_kb"] = _status_kb("VmRSS")
        _cap_address_space(args.get("as_limit_mb", 1536))
        counted = [0]

        def read() -> None:
            settings = FetchSettings(timeout=args.get("seconds", 8))
            for _, records in fetch_range(client, args["topic"], 0, 0, args.get("end"), settings):
                counted[0] += len(records)

        report["outcome"], _ = _describe(read)
        report["records"] = counted[0]
    finally:
        client.close()


def produce(args: dict[str, Any], report: dict[str, Any]) -> None:
    """Produce the given (value, timestamp) records and flush; count each record's reports; the
    close must return. Each refused produce() is noted with its exception type."""
    reports: dict[str, list[str]] = {}

    def on_delivery(err: KafkaError | None, msg: Any) -> None:
        reports.setdefault(msg.value().decode(), []).append("ok" if err is None else err.name())

    producer = Producer({"bootstrap.servers": args["bootstrap"], "on_delivery": on_delivery, **args.get("conf", {})})
    report["baseline_kb"] = _status_kb("VmRSS")
    _cap_address_space(args.get("as_limit_mb", 1536))
    refused: dict[str, str] = {}
    for value, timestamp in args["records"]:
        try:
            producer.produce(args["topic"], value=value.encode(), timestamp=timestamp, partition=0)
        except BaseException as exc:
            refused[value] = f"{type(exc).__module__}.{type(exc).__name__}: {exc}"[:300]
    report["refused"] = refused
    report["flush_left"] = producer.flush(args.get("flush", 15))
    done = threading.Event()
    threading.Thread(target=lambda: (producer.close(10), done.set()), daemon=True).start()
    report["closed"] = done.wait(args.get("close_wait", 20))
    report["reports"] = reports
    report["outcome"] = "ok"


def unclosed(args: dict[str, Any], report: dict[str, Any]) -> None:
    """Produce records nobody will deliver and leave without close(): the interpreter's exit is
    what the test watches (its stderr)."""
    producer = Producer({"bootstrap.servers": args["bootstrap"], "message.timeout.ms": 600_000})
    for i in range(args["count"]):
        producer.produce(args["topic"], value=b"unclosed-%d" % i)
    report["baseline_kb"] = _status_kb("VmRSS")
    report["outcome"] = "ok"
    globals()["_kept_alive"] = producer  # alive until the interpreter exits


SCENARIOS: dict[str, Callable[[dict[str, Any], dict[str, Any]], None]] = {
    "list_topics": list_topics,
    "fetch": fetch,
    "produce": produce,
    "unclosed": unclosed,
}


def main() -> None:
    scenario, raw = sys.argv[1], sys.argv[2]
    report: dict[str, Any] = {"scenario": scenario}
    try:
        SCENARIOS[scenario](json.loads(raw), report)
    except BaseException as exc:
        report.setdefault("outcome", f"escaped {type(exc).__name__}: {exc}"[:500])
    report["peak_kb"] = _status_kb("VmHWM")
    print(json.dumps(report), flush=True)


if __name__ == "__main__":
    main()
