"""kafkawire.kafkatest's verifiable producer and consumer (the clients Apache Kafka's system tests
drive) run as programs on Tansu, their JSON events judged by confluent-kafka reading the topic and
the group's committed offsets. (confluent-kafka's own kafkatest programs do not run on Python 3:
they import their sibling module by an absolute name and call ``dict.iteritems``.)"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import confluent_kafka
import pytest

import kafkawire
from tests.harness.judge import judge_config, unique_name
from tests.harness.topics import create_topic

pytestmark = pytest.mark.broker

SRC = str(Path(kafkawire.__file__).resolve().parents[1])


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([SRC, env.get("PYTHONPATH", "")])
    return env


def _events(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _read_back(bootstrap: str, topic: str, count: int) -> list[tuple[int, int, str | None, str]]:
    consumer = confluent_kafka.Consumer(
        judge_config(bootstrap, **{"group.id": unique_name("judge"), "auto.offset.reset": "earliest"})
    )
    consumer.subscribe([topic])
    got: list[tuple[int, int, str | None, str]] = []
    deadline = time.monotonic() + 60
    try:
        while len(got) < count and time.monotonic() < deadline:
            msg = consumer.poll(1)
            if msg is not None and msg.error() is None:
                key = msg.key()
                got.append((msg.partition(), msg.offset(), key.decode() if key else None, msg.value().decode()))
    finally:
        consumer.close()
    return sorted(got)


@pytest.mark.slow  # (make test's time: CI runs it in test-slow)
def test_verifiable_producer_and_consumer(tansu: Any, topic_name: Callable[[str], str], tmp_path: Path) -> None:
    bootstrap = str(tansu.bootstrap() if callable(tansu.bootstrap) else tansu.bootstrap)
    topic, group = topic_name("kafkatest"), unique_name("kafkatest")
    create_topic(bootstrap, topic, 2)
    produced = subprocess.run(
        [
            sys.executable,
            "-m",
            "kafkawire.kafkatest.verifiable_producer",
            "--topic",
            topic,
            "--broker-list",
            bootstrap,
            "--max-messages",
            "50",
            "--value-prefix",
            "v",
            "--repeating-keys",
            "5",
            "--acks",
            "-1",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=_env(),
    )
    assert produced.returncode == 0, produced.stderr
    events = _events(produced.stdout)
    sent = [e for e in events if e["name"] == "producer_send_success"]
    assert [e["name"] for e in events if e["name"] != "producer_send_success"] == ["shutdown_complete"]
    assert events[-1]["_qlen"] == 0
    reported = sorted((e["partition"], e["offset"], e["key"], e["value"]) for e in sent)
    assert sorted(e["value"] for e in sent) == sorted(f"v.{i}" for i in range(50))
    assert reported == _read_back(bootstrap, topic, 50)

    errors = (tmp_path / "consumer.err").open("w")  # its debug lines, shown when a check fails
    consumer = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kafkawire.kafkatest.verifiable_consumer",
            "--topic",
            topic,
            "--group-id",
            group,
            "--bootstrap-server",
            bootstrap,
            "--session-timeout",
            "6000",
        ],
        stdout=subprocess.PIPE,
        stderr=errors,
        text=True,
        env=_env(),
    )
    seen: list[dict[str, Any]] = []
    try:
        assert consumer.stdout is not None
        consumed = 0
        deadline = time.monotonic() + 90
        while consumed < 50 and time.monotonic() < deadline:
            line = consumer.stdout.readline()
            if not line:
                break
            seen.append(json.loads(line))
            if seen[-1]["name"] == "records_consumed":
                consumed += seen[-1]["count"]
        assert consumed == 50, seen
        consumer.send_signal(signal.SIGTERM)
        rest, _ = consumer.communicate(timeout=60)
    finally:
        if consumer.poll() is None:
            consumer.kill()
            consumer.wait()
        errors.close()
    seen += _events(rest)
    assert consumer.returncode == 0
    names = [e["name"] for e in seen]
    assert names[0] == "partitions_assigned" and names[-1] == "shutdown_complete"
    assert seen[-1]["failed"] is False
    assigned = sorted((p["topic"], p["partition"]) for p in seen[0]["partitions"])
    assert assigned == [(topic, 0), (topic, 1)]
    ends = {p: max(o for q, o, _k, _v in reported if q == p) + 1 for p, *_ in reported}
    commits = [e for e in seen if e["name"] == "offsets_committed"]
    assert commits and all(c["success"] for c in commits), (names, (tmp_path / "consumer.err").read_text()[-3000:])
    assert {o["partition"]: o["offset"] for o in commits[-1]["offsets"]} == ends
    ranges = [p for e in seen if e["name"] == "records_consumed" for p in e["partitions"]]
    assert {
        p["partition"]: max(r["maxOffset"] for r in ranges if r["partition"] == p["partition"]) for p in ranges
    } == {p: end - 1 for p, end in ends.items()}
    judge = confluent_kafka.Consumer(judge_config(bootstrap, **{"group.id": group}))
    try:
        committed = judge.committed([confluent_kafka.TopicPartition(topic, p) for p in (0, 1)], timeout=30)
    finally:
        judge.close()
    assert {tp.partition: tp.offset for tp in committed} == ends
