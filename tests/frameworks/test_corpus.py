"""The corpus: more libraries built on confluent-kafka, each run on both clients against one Kafka 2.3
broker (test_frameworks.py holds quixstreams and FastStream).

sentry-arroyo brings its own broker test suite (from its sdist, fetched with pip into the test venv),
and confluent-kafka-helpers its own suite (in its wheel): each runs once plainly and once under
``python -m kafkawire.run -m pytest``, and every test's outcome must be the same. The others run a program of ours written against the library's documented API
(tests/frameworks/<library>_*.py); both runs must print the same output, and the confluent-kafka run's
output is checked against what the input implies.

A difference whose cause is known and belongs to another point of issue 37 is listed in ``KNOWN``
with that point: the test is then an expected failure as long as the difference is there (and passes
once it is gone); any other difference fails.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tarfile
import xml.etree.ElementTree as ElementTree
import zipfile
from pathlib import Path

import pytest

from tests.frameworks.runner import HERE, RUNS, child_env, failed_run, on_client, run_program
from tests.harness.judge import Record, consume_all, produce_with_confluent, unique_name
from tests.harness.kafka_broker import KafkaBroker
from tests.harness.topics import create_topic

pytestmark = [pytest.mark.broker, pytest.mark.slow, pytest.mark.rotating]

# Differences with a known cause, by case, each with the point of issue 37 or 49 it belongs to. Those
# found and fixed: unsubscribe's revocation, _PARTITION_EOF's timing, the consumer's statistics
# without 'topics' (issue 37); libversion() and the stored offset past a transaction's marker (49).
KNOWN: dict[str, str] = {}


def _same_or_known(case: str, confluent: object, kafkawire: object) -> None:
    if confluent == kafkawire:
        return
    if case in KNOWN:
        pytest.xfail(KNOWN[case])
    assert kafkawire == confluent


# sentry-arroyo: its own suite ----------------------------------------------------------------------

ARROYO_TESTS = [
    "tests/backends/test_kafka.py",
    "tests/backends/test_kafka_producer.py",
    "tests/backends/test_kafka_commit_callback.py",
    "tests/backends/test_confluent_producer.py",
]


def _arroyo_source() -> Path:
    """The installed sentry-arroyo's sdist, unpacked once into the test venv, with the helpers its
    tests import but the sdist leaves out (tests/frameworks/suites/arroyo)."""
    version = importlib.metadata.version("sentry-arroyo")
    cache = Path(sys.prefix) / "corpus"
    tree = cache / f"sentry_arroyo-{version}"
    if not (tree / "tests" / "metrics.py").exists():
        cache.mkdir(exist_ok=True)
        archive = cache / f"sentry_arroyo-{version}.tar.gz"
        if not archive.exists():
            pip = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:"]
            subprocess.run([*pip, "-d", str(cache), f"sentry-arroyo=={version}"], check=True, timeout=300)
        with tarfile.open(archive) as sdist:
            sdist.extractall(cache, filter="data")
        for helper in (HERE / "suites" / "arroyo").glob("*.py"):
            shutil.copy(helper, tree / "tests" / helper.name.removeprefix("arroyo_"))
    return tree


def _outcomes(report: Path) -> dict[str, str]:
    outcomes = {}
    for case in ElementTree.parse(report).getroot().iter("testcase"):
        kinds = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
        outcomes[f"{case.get('classname')}::{case.get('name')}"] = kinds[0] if kinds else "passed"
    return outcomes


def test_sentry_arroyo_own_suite(kafka23: KafkaBroker, tmp_path: Path) -> None:
    pytest.importorskip("arroyo")
    tree = _arroyo_source()
    outcomes = {}
    for on in RUNS:
        report = tmp_path / f"{on}.xml"
        command = [*on_client(on), "-m", "pytest", "-p", "no:cacheprovider", "-q", "--timeout", "120"]
        command += ["-c", str(tree / "setup.cfg"), "--rootdir", str(tree)]  # its own root, not ours around it
        # TestKafkaStreamsKip848 needs the KIP-848 protocol, which Kafka 2.3 does not have.
        command += ["-k", "not Kip848", f"--junitxml={report}", *ARROYO_TESTS]
        env = child_env({"DEFAULT_BROKERS": kafka23.bootstrap()})
        subprocess.run(command, cwd=tree, env=env, capture_output=True, timeout=600)
        outcomes[on] = _outcomes(report)

    confluent, kafkawire = outcomes["confluent-kafka"], outcomes["kafkawire"]
    assert len(confluent) >= 30 and sorted(confluent) == sorted(kafkawire)
    assert set(confluent.values()) == {"passed"}, confluent
    differing = sorted(case for case in confluent if kafkawire[case] != confluent[case])
    unexplained = [case for case in differing if case not in KNOWN]
    assert not unexplained, {case: kafkawire[case] for case in unexplained}
    if differing:
        pytest.xfail("; ".join(f"{case}: {KNOWN[case]}" for case in differing))


# confluent-kafka-helpers: the legacy Avro API, its own suite and a program ------------------------

HELPERS = "confluent-kafka-helpers==1.5.0"


def _helpers_source() -> Path:
    """confluent-kafka-helpers' wheel (its tests are in it), unpacked once into the test venv; not
    installed, as its top-level ``tests`` package would land in site-packages."""
    name, version = HELPERS.split("==")
    tree = Path(sys.prefix) / "corpus" / f"{name.replace('-', '_')}-{version}"
    if not (tree / "tests" / "conftest.py").exists():
        tree.parent.mkdir(exist_ok=True)
        pip = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary", ":all:"]
        subprocess.run([*pip, "-d", str(tree.parent), HELPERS], check=True, timeout=300)
        with zipfile.ZipFile(next(tree.parent.glob(f"{name.replace('-', '_')}-{version}-*.whl"))) as wheel:
            wheel.extractall(tree)
    return tree


def test_confluent_kafka_helpers_own_suite(tmp_path: Path) -> None:
    pytest.importorskip("structlog")
    pytest.importorskip("pytest_mock")
    tree = _helpers_source()
    outcomes = {}
    for on in RUNS:
        report = tmp_path / f"{on}.xml"
        command = [*on_client(on), "-m", "pytest", "-p", "no:cacheprovider", "-q", "--rootdir", str(tree)]
        command += ["-c", os.devnull, f"--junitxml={report}", "tests"]
        env = child_env()
        env["PYTHONPATH"] = os.pathsep.join([str(tree), env["PYTHONPATH"]])
        subprocess.run(command, cwd=tree, env=env, capture_output=True, timeout=600)
        outcomes[on] = _outcomes(report)
    confluent, kafkawire = outcomes["confluent-kafka"], outcomes["kafkawire"]
    assert len(confluent) >= 90 and set(confluent.values()) == {"passed"}, confluent
    _same_or_known("confluent-kafka-helpers suite", confluent, kafkawire)


def test_confluent_kafka_helpers_program(kafka23: KafkaBroker) -> None:
    pytest.importorskip("structlog")
    from tests.serde.registry_front import registry_front

    tree, bootstrap, count = _helpers_source(), kafka23.bootstrap(), 30
    printed = {}
    for on in RUNS:
        topic = unique_name(f"orders-{on}")
        create_topic(bootstrap, topic, 2)
        with registry_front() as front:  # a fresh registry each: the same ids
            args = [str(tree), bootstrap, front.url, topic, unique_name(f"helpers-{on}"), str(count)]
            printed[on] = run_program("helpers_avro.py", args, on, must_exit_0=on == RUNS[0])
    rows = [json.loads(line) for line in printed["confluent-kafka"].splitlines()]
    assert rows[0] == {"schema_ids": [1, 2]}
    read = sorted((row["value"]["id"], row["key"]) for row in rows[1:])
    assert read == [(i, f"customer-{i % 3}") for i in range(count)]
    _same_or_known("confluent-kafka-helpers", printed["confluent-kafka"], printed["kafkawire"])


# kombu's confluentkafka transport (Celery's broker transport) --------------------------------------


def test_kombu_task_queue(kafka23: KafkaBroker) -> None:
    pytest.importorskip("kombu.transport.confluentkafka")
    tasks = 40
    printed = {}
    for on in RUNS:
        printed[on] = run_program("kombu_tasks.py", [kafka23.bootstrap(), unique_name(f"tasks-{on}"), str(tasks)], on)
    expected = [{"id": f"task-{i}", "origin": "corpus", "result": i + i * i} for i in range(tasks)]
    assert [json.loads(line) for line in printed["confluent-kafka"].splitlines()] == expected
    _same_or_known("kombu", printed["confluent-kafka"], printed["kafkawire"])


def test_celery_worker(kafka23: KafkaBroker) -> None:
    pytest.importorskip("celery")
    pytest.importorskip("kombu.transport.confluentkafka")
    tasks = 30
    printed = {}
    for on in RUNS:
        printed[on] = run_program(
            "celery_worker.py", [kafka23.bootstrap(), unique_name(f"celery-{on}"), str(tasks)], on
        )
    expected = [{"order": i, "total": round((1 + i % 4) * (2.5 + i % 3), 2)} for i in range(tasks)]
    assert [json.loads(line) for line in printed["confluent-kafka"].splitlines()] == expected
    _same_or_known("celery", printed["confluent-kafka"], printed["kafkawire"])


# opentelemetry-instrumentation-confluent-kafka -----------------------------------------------------


def test_opentelemetry_instrumentation(kafka23: KafkaBroker) -> None:
    pytest.importorskip("opentelemetry.instrumentation.confluent_kafka")
    records = 24
    printed = {}
    for on in RUNS:
        args = [kafka23.bootstrap(), unique_name(f"otel-{on}"), unique_name(f"otel-{on}"), str(records)]
        printed[on] = run_program("otel_traced.py", args, on).splitlines()
    rows = [json.loads(line) for line in printed["confluent-kafka"]]
    spans = rows[:-2]
    assert sum(row["kind"] == "PRODUCER" for row in spans) == records
    processed = [row for row in spans if row["name"] == "<topic> process"]
    assert len(processed) == records and all(row["linked_to_producer"] for row in processed)
    assert rows[-2]["read"] == rows[-2]["delivered"] and len(rows[-2]["read"]) == records
    assert rows[-1]["read_order_per_partition"] == [list(range(records // 3))] * 3
    _same_or_known("opentelemetry", printed["confluent-kafka"], printed["kafkawire"])


# ddtrace's confluent-kafka integration -------------------------------------------------------------


def test_ddtrace_integration(kafka23: KafkaBroker) -> None:
    pytest.importorskip("ddtrace")
    records = 20
    printed = {}
    for on in RUNS:
        args = [kafka23.bootstrap(), unique_name(f"dd-{on}"), unique_name(f"dd-{on}"), str(records)]
        printed[on] = run_program("ddtrace_traced.py", args, on, must_exit_0=on == RUNS[0]).splitlines()
    rows = [json.loads(line) for line in printed["confluent-kafka"]]
    spans = rows[:-2]
    consumed = [row for row in spans if row["name"] == "kafka.consume"]
    assert len(consumed) == records and sum(row["name"] == "kafka.produce" for row in spans) == records
    tombstones = sorted(row["tags"]["kafka.partition"] for row in consumed if row["tags"]["kafka.tombstone"] == "True")
    assert len(tombstones) == records // 5  # every fifth value is empty
    assert rows[-2]["read"] == rows[-2]["delivered"] and len(rows[-2]["read"]) == records
    assert rows[-1]["committed"] == [[0, records // 2], [1, records // 2]]
    _same_or_known("ddtrace", printed["confluent-kafka"], printed["kafkawire"])


# bytewax's Kafka connectors ------------------------------------------------------------------------


def test_bytewax_dataflow(kafka23: KafkaBroker) -> None:
    pytest.importorskip("bytewax.connectors.kafka")
    bootstrap = kafka23.bootstrap()
    source, count = unique_name("readings"), 1200
    create_topic(bootstrap, source, 2)
    amounts = [(f"sensor-{i % 6}", i % 2, i % 17) for i in range(count)]
    produce_with_confluent(
        bootstrap, source, [Record(json.dumps({"amount": a}).encode(), k.encode(), partition=p) for k, p, a in amounts]
    )
    totals: dict[str, int] = {}
    expected = []
    for offset_in_partition, (key, partition, amount) in enumerate(amounts):
        totals[key] = totals.get(key, 0) + amount
        row = {"key": key, "partition": partition, "offset": offset_in_partition // 2, "amount": amount}
        expected.append({**row, "total": totals[key]})
    expected.sort(key=lambda row: (row["key"], row["offset"]))

    printed, written = {}, {}
    for on in RUNS:
        sink = unique_name(f"totals-{on}")
        printed[on] = run_program("bytewax_flow.py", [bootstrap, source, sink], on, must_exit_0=on == RUNS[0])
        rows = [] if failed_run(printed[on]) else consume_all(bootstrap, sink, count, timeout=30, settle=1.0)
        written[on] = sorted((m.key().decode(), m.value().decode()) for m in rows)
    assert [json.loads(line) for line in printed["confluent-kafka"].splitlines()] == expected
    assert len(written["confluent-kafka"]) == count
    _same_or_known("bytewax", (printed[RUNS[0]], written[RUNS[0]]), (printed["kafkawire"], written["kafkawire"]))


# streamz's Kafka nodes -----------------------------------------------------------------------------


def test_streamz_pipeline(kafka23: KafkaBroker) -> None:
    pytest.importorskip("streamz")
    bootstrap = kafka23.bootstrap()
    source, count = unique_name("events"), 90
    create_topic(bootstrap, source, 1)
    produce_with_confluent(
        bootstrap, source, [Record(json.dumps({"id": i, "amount": i % 10}).encode()) for i in range(count)]
    )
    expected = [{"id": i, "doubled": (i % 10) * 2} for i in range(count) if (i % 10) % 3]

    printed = {}
    for on in RUNS:
        args = [bootstrap, source, unique_name(f"doubled-{on}"), unique_name(f"streamz-{on}"), str(len(expected))]
        printed[on] = [json.loads(line) for line in run_program("streamz_pipeline.py", args, on).splitlines()]
    assert printed["confluent-kafka"] == expected  # delivery reports in produce order (one partition)
    _same_or_known("streamz", printed["confluent-kafka"], printed["kafkawire"])


# django-kafka ---------------------------------------------------------------------------------------


def test_django_kafka_consumer(kafka23: KafkaBroker) -> None:
    if importlib.util.find_spec("django_kafka") is None:  # importing it needs configured Django settings
        pytest.skip("django-kafka is not installed")
    bootstrap, orders = kafka23.bootstrap(), 24
    printed = {}
    for on in RUNS:
        topic = unique_name(f"orders-{on}")
        create_topic(bootstrap, topic, 2)
        printed[on] = run_program("django_kafka_app.py", [bootstrap, topic, unique_name(f"dj-{on}"), str(orders)], on)
    rows = [json.loads(line) for line in printed["confluent-kafka"].splitlines()]
    expected = [
        {"key": f"shop-{i % 3}", "partition": i % 2, "offset": i // 2, "order": i, "amount": 5 * i}
        for i in sorted(range(orders), key=lambda i: (i % 2, i))
    ]
    assert rows[:-1] == expected
    assert rows[-1] == {"committed": [[0, orders // 2], [1, orders // 2]]}
    _same_or_known("django-kafka", printed["confluent-kafka"], printed["kafkawire"])


# openlineage-python's Kafka transport -------------------------------------------------------------


def test_openlineage_kafka_transport(kafka23: KafkaBroker) -> None:
    pytest.importorskip("openlineage.client.transport.kafka")
    bootstrap, runs = kafka23.bootstrap(), 9
    printed = {}
    for on in RUNS:
        topic = unique_name(f"lineage-{on}")
        create_topic(bootstrap, topic, 3)
        printed[on] = run_program("openlineage_emitter.py", [bootstrap, topic, unique_name(f"ol-{on}"), str(runs)], on)
    rows = [json.loads(line) for line in printed["confluent-kafka"].splitlines()]
    assert len(rows) == 4 * runs
    by_key: dict[str, list[dict[str, object]]] = {}
    for row in rows:
        by_key.setdefault(str(row["key"]), []).append(row)
    assert sorted(by_key) == [f"run:corpus/etl-{j}" for j in range(3)]  # a child run is keyed by its parent job
    for key, events in by_key.items():
        assert len({row["partition"] for row in events}) == 1  # one key, one partition: the events keep their order
        jobs = [(row["job"], row["type"]) for row in events]
        parent = key.removeprefix("run:corpus/")
        step = [(parent, "START"), (f"{parent}.step", "START"), (f"{parent}.step", "COMPLETE"), (parent, "COMPLETE")]
        assert jobs == step * (runs // 3)
    _same_or_known("openlineage", printed["confluent-kafka"], printed["kafkawire"])


# robotframework-confluentkafkalibrary ---------------------------------------------------------------


def test_robotframework_kafka_library(kafka23: KafkaBroker, tmp_path: Path) -> None:
    pytest.importorskip("ConfluentKafkaLibrary")
    printed = {}
    for on in RUNS:
        args = [kafka23.bootstrap(), unique_name(f"robot-{on}"), unique_name(f"robot-{on}"), str(tmp_path / on)]
        printed[on] = run_program("robot_kafka.py", args, on)
    lines = printed["confluent-kafka"].splitlines()
    assert len(lines) == 7 and all(line.endswith(": PASS") for line in lines), lines
    _same_or_known("robotframework", printed["confluent-kafka"], printed["kafkawire"])


# kafkian ---------------------------------------------------------------------------------------------


def test_kafkian_producer_consumer(kafka23: KafkaBroker) -> None:
    pytest.importorskip("kafkian")
    bootstrap, count = kafka23.bootstrap(), 25
    printed = {}
    for on in RUNS:
        topic = unique_name(f"kafkian-{on}")
        create_topic(bootstrap, topic, 1)
        args = [bootstrap, topic, unique_name(f"kafkian-{on}"), str(count)]
        printed[on] = run_program("kafkian_orders.py", args, on, must_exit_0=on == RUNS[0])
    rows = [json.loads(line) for line in printed["confluent-kafka"].splitlines()]
    assert rows[0] == {"delivered": [[0, i] for i in range(count)]}
    expected = []
    for i in range(count):
        expected.append({"key": f"customer-{i % 4}", "partition": 0, "offset": i, "headers": [["n", str(i)]]})
        expected[-1].update({"order": i, "amount": 3 * i})
        expected.append({"commit": [[0, i + 1]]})
    assert rows[1:-1] == expected
    assert rows[-1] == {"callbacks are the commits": True}
    _same_or_known("kafkian", printed["confluent-kafka"], printed["kafkawire"])


# wunderkafka -----------------------------------------------------------------------------------------


def test_wunderkafka_subscriptions(kafka23: KafkaBroker) -> None:
    pytest.importorskip("wunderkafka")
    bootstrap, count, t0 = kafka23.bootstrap(), 40, 1_700_000_000_000
    printed = {}
    for on in RUNS:
        topic = unique_name(f"wunder-{on}")
        create_topic(bootstrap, topic, 2)
        args = [bootstrap, topic, unique_name(f"wunder-{on}"), str(count), str(t0)]
        printed[on] = run_program("wunderkafka_readings.py", args, on, must_exit_0=on == RUNS[0])
    half = count // 2
    records = sorted(
        [i % 2, i // 2, f"sensor-{i % 4}", json.dumps({"sensor": i % 4, "reading": i * 1.5})] for i in range(count)
    )
    expected: list[object] = []
    for way, first in (("from the beginning", 0), ("from offset 5", 5), ("from a timestamp", half - 4)):
        expected.append({"subscription": way, "partition size": half})
        expected += [row for row in records if row[1] >= first]
        expected.append(["committed", [[0, half], [1, half]]])
    assert [json.loads(line) for line in printed["confluent-kafka"].splitlines()] == expected
    _same_or_known("wunderkafka", printed["confluent-kafka"], printed["kafkawire"])


# kafka-async ----------------------------------------------------------------------------------------


def test_kafka_async_service(kafka23: KafkaBroker) -> None:
    pytest.importorskip("kafka_async")
    bootstrap, count = kafka23.bootstrap(), 30
    printed = {}
    for on in RUNS:
        topic, group, transactional_id = (unique_name(f"{kind}-{on}") for kind in ("aio", "aio", "aio-tx"))
        args = [bootstrap, topic, group, transactional_id, str(count)]
        printed[on] = [json.loads(line) for line in run_program("kafka_async_service.py", args, on).splitlines()]
        for row in printed[on]:  # the names are the run's own: compare them as placeholders
            for key in ("created", "deleted"):
                if key in row:
                    row[key] = ["topic" if name == topic else name for name in row[key]]
    per_partition = count // 3
    rows = sorted([i % 3, i // 3, f"k{i}"] for i in range(count))
    assert (
        printed["confluent-kafka"]
        == [
            {"created": ["topic"]},
            {"delivered": rows},
            {"committed": [[p, per_partition + 1] for p in range(3)]},  # past each partition's commit marker
            {"positions": [per_partition + 1] * 3},
            {"assigned": [[0, 1, 2]]},
            {"read": [[*row, int(row[2][1:])] for row in rows]},
            {"group offsets": [[p, per_partition + 1] for p in range(3)]},
            {"deleted": ["topic"]},
        ]
    )
    _same_or_known("kafka-async", printed["confluent-kafka"], printed["kafkawire"])


# aio-confluent-kafka ----------------------------------------------------------------------------------


def test_aio_confluent_kafka_subclasses(kafka23: KafkaBroker) -> None:
    pytest.importorskip("aio_confluent_kafka")
    bootstrap, count = kafka23.bootstrap(), 40
    printed = {}
    for on in RUNS:
        topic = unique_name(f"aiock-{on}")
        create_topic(bootstrap, topic, 2)
        args = [bootstrap, topic, unique_name(f"aiock-{on}"), str(count)]
        printed[on] = [json.loads(line) for line in run_program("aio_confluent_pipeline.py", args, on).splitlines()]
    delivered, read, committed = printed["confluent-kafka"]
    assert len(delivered["delivered"]) == count
    by_key: dict[str, set[int]] = {}
    for partition, _offset, key in delivered["delivered"]:
        by_key.setdefault(key, set()).add(partition)
    assert sorted(by_key) == [f"device-{d}" for d in range(5)] and all(len(p) == 1 for p in by_key.values())
    assert [row[:3] for row in read["read"]] == delivered["delivered"]  # each record where its report said
    assert sorted(row[3] for row in read["read"]) == list(range(count))
    assert all(row[2] == f"device-{row[3] % 5}" for row in read["read"])
    sizes = {p: sum(1 for row in delivered["delivered"] if row[0] == p) for p in (0, 1)}
    assert committed["committed"] == [[p, sizes[p]] for p in (0, 1) if sizes[p]]
    _same_or_known("aio-confluent-kafka", printed["confluent-kafka"], printed["kafkawire"])
