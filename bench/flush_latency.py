"""``produce()`` of one record then ``flush()``: kafkawire against confluent-kafka (issue 37's target).

``python -m bench.flush_latency [--rounds 3] [--records 200] [--bootstrap-servers HOST:PORT]``:
Tansu (loopback, memory only) unless given a broker. Each client and form gets one producer
(``linger.ms`` at its default, acks=all as both defaults say), warmed by one record; then
``--records`` times: ``produce()`` one record and ``flush()``, the clock around both, the loop of
a task queue that publishes one message and waits for it. Two forms: without a delivery callback
and with one (``on_delivery``). Every flush must return 0 (nothing left). Prints each round, then
p50/p90/mean per client and form and the ratio kafkawire / confluent-kafka (target: within 2x of
confluent-kafka's p50, or under 1 ms).
"""

from __future__ import annotations

import argparse
import statistics
import time
import uuid
from typing import Any

FORMS = ("no callback", "on_delivery")
CLIENTS = ("confluent-kafka", "kafkawire")
TARGET_RATIO = 2.0
TARGET_MS = 1.0


def _producer(client: str, bootstrap: str) -> Any:
    if client == "confluent-kafka":
        import confluent_kafka as module
    else:
        import kafkawire as module  # type: ignore[no-redef]
    return module.Producer({"bootstrap.servers": bootstrap})


def one_run(client: str, bootstrap: str, topic: str, form: str, count: int) -> list[float]:
    """The latency of ``count`` produce()+flush() pairs, each checked to leave nothing behind."""
    producer = _producer(client, bootstrap)
    reports: list[Any] = []
    kwargs: dict[str, Any] = {}
    if form == "on_delivery":
        kwargs["on_delivery"] = lambda err, msg: reports.append(err)
    try:
        producer.produce(topic, b"warm-up", **kwargs)
        if producer.flush(30):
            raise RuntimeError(f"{client}: the warm-up record was not delivered")
        times: list[float] = []
        for i in range(count):
            t0 = time.perf_counter()
            producer.produce(topic, b"v%d" % i, **kwargs)
            left = producer.flush(10)
            times.append(time.perf_counter() - t0)
            if left:
                raise RuntimeError(f"{client}: flush() left {left} record(s)")
        if form == "on_delivery" and (len(reports) != count + 1 or any(e is not None for e in reports)):
            raise RuntimeError(f"{client}: {len(reports)} reports for {count + 1} records, errors {reports}")
        return times
    finally:
        closer = getattr(producer, "close", None)
        if closer is not None:
            closer()


def _ms(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return 1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _create_topic(bootstrap: str, topic: str) -> None:
    from kafkawire.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(topic, 1, 1)]).values():
        future.result(30)


def run(bootstrap: str, rounds: int, records: int) -> dict[tuple[str, str], list[float]]:
    topic = f"flush-{uuid.uuid4().hex[:8]}"
    _create_topic(bootstrap, topic)
    times: dict[tuple[str, str], list[float]] = {(c, f): [] for c in CLIENTS for f in FORMS}
    for r in range(rounds):
        for client in CLIENTS if r % 2 == 0 else CLIENTS[::-1]:
            for form in FORMS:
                got = one_run(client, bootstrap, topic, form, records)
                times[client, form].extend(got)
                print(f"  round {r + 1} {client:16} {form:12} p50 {_ms(got, 0.5):7.3f} ms", flush=True)
    return times


def report(times: dict[tuple[str, str], list[float]]) -> None:
    print("\n| client | form | p50 ms | p90 ms | mean ms |")
    print("|---|---|---:|---:|---:|")
    for c in CLIENTS:
        for f in FORMS:
            t = times[c, f]
            print(
                f"| {c} | produce()+flush(), {f} | {_ms(t, 0.5):.3f} | {_ms(t, 0.9):.3f} | {1000 * statistics.fmean(t):.3f} |"
            )
    for f in FORMS:
        ours, theirs = _ms(times["kafkawire", f], 0.5), _ms(times["confluent-kafka", f], 0.5)
        met = ours <= TARGET_RATIO * theirs or ours <= TARGET_MS
        print(
            f"{f}: kafkawire / confluent-kafka p50 {ours / theirs:.2f}x "
            f"(target <= {TARGET_RATIO:.0f}x or <= {TARGET_MS:.0f} ms): {'met' if met else 'NOT met'}"
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--records", type=int, default=200)
    parser.add_argument("--bootstrap-servers", default=None)
    args = parser.parse_args(argv)
    if args.bootstrap_servers:
        report(run(args.bootstrap_servers, args.rounds, args.records))
        return
    from kafkawire.local_broker import TansuBroker

    with TansuBroker() as tansu:
        print(
            f"Tansu on {tansu.bootstrap}; {args.records} x produce()+flush() per client and form, {args.rounds} rounds"
        )
        report(run(tansu.bootstrap, args.rounds, args.records))


if __name__ == "__main__":
    main()
