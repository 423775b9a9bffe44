"""openlineage-python's Kafka transport, as its documentation configures it: an ``OpenLineageClient``
whose transport is ``kafka`` (the producer's configuration, a topic, a flush after each event). The
program emits the START and COMPLETE events of parent runs and of child runs (a ``parent`` facet, so
their key is the parent's job and their events share its partition), then reads the topic back with
a plain consumer and prints each record's partition, offset, key and event, in topic order.

usage: openlineage_emitter.py BROKER TOPIC GROUP RUNS
"""

from __future__ import annotations

import json
import sys
import uuid

import confluent_kafka
from openlineage.client import OpenLineageClient
from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.facet_v2 import parent_run

NAMESPACE = "corpus"


def _events(runs: int) -> list[RunEvent]:
    """Per parent run: its START, a child's START and COMPLETE, its COMPLETE (fixed ids and times)."""
    events = []
    for i in range(runs):
        job = Job(namespace=NAMESPACE, name=f"etl-{i % 3}")
        run = Run(runId=str(uuid.UUID(int=2 * i + 1)))
        child_job = Job(namespace=NAMESPACE, name=f"etl-{i % 3}.step")
        parent = parent_run.ParentRunFacet(
            run=parent_run.Run(runId=run.runId), job=parent_run.Job(namespace=NAMESPACE, name=job.name)
        )
        child = Run(runId=str(uuid.UUID(int=2 * i + 2)), facets={"parent": parent})
        inputs = [InputDataset(namespace="s3://lake", name=f"raw/{i}")]
        outputs = [OutputDataset(namespace="s3://lake", name=f"clean/{i}")]
        at = f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}"
        events += [
            RunEvent(eventType=RunState.START, eventTime=f"{at}.000Z", run=run, job=job, inputs=inputs),
            RunEvent(eventType=RunState.START, eventTime=f"{at}.100Z", run=child, job=child_job),
            RunEvent(eventType=RunState.COMPLETE, eventTime=f"{at}.200Z", run=child, job=child_job),
            RunEvent(eventType=RunState.COMPLETE, eventTime=f"{at}.300Z", run=run, job=job, outputs=outputs),
        ]
    return events


def main(broker: str, topic: str, group: str, runs: int) -> None:
    print("client library:", confluent_kafka.__name__, file=sys.stderr)  # the test checks which one ran
    producer = {"bootstrap.servers": broker, "broker.address.family": "v4", "acks": "all"}
    client = OpenLineageClient(config={"transport": {"type": "kafka", "topic": topic, "config": producer}})
    for event in _events(runs):
        client.emit(event)
    assert client.close(30)

    reader = confluent_kafka.Consumer(
        {**producer, "group.id": group, "auto.offset.reset": "earliest", "enable.partition.eof": True}
    )
    partitions = reader.list_topics(topic, 10).topics[topic].partitions
    reader.assign([confluent_kafka.TopicPartition(topic, p, 0) for p in partitions])
    rows, ended = [], set()
    while len(ended) < len(partitions):
        message = reader.poll(10)
        assert message is not None, "the topic ended early"
        if message.error():
            assert message.error().code() == confluent_kafka.KafkaError._PARTITION_EOF, message.error()
            ended.add(message.partition())
            continue
        event = json.loads(message.value())
        rows.append(
            {
                "partition": message.partition(),
                "offset": message.offset(),
                "key": message.key().decode(),
                "type": event["eventType"],
                "job": event["job"]["name"],
                "run": event["run"]["runId"],
                "time": event["eventTime"],
                "parent": event["run"]["facets"].get("parent", {}).get("job", {}).get("name"),
            }
        )
    reader.close()
    for row in sorted(rows, key=lambda r: (r["partition"], r["offset"])):
        print(json.dumps(row, sort_keys=True))


if __name__ == "__main__":
    broker, topic, group, runs = sys.argv[1:]
    main(broker, topic, group, int(runs))
