"""The Spark reader's options (Spark's Kafka connector's rules and messages), its partition
planning and its per-trigger rate limit: pure functions, no session, no broker."""

from __future__ import annotations

import pytest

from kafkawire.spark.read_options import (
    EARLIEST,
    LATEST,
    OffsetLimit,
    ReadOptionError,
    batch_options,
    duration_seconds,
    stream_options,
)
from kafkawire.spark.reader import (
    KafkaStreamReader,
    OffsetRange,
    offsets_from_json,
    offsets_to_json,
    plan_ranges,
    rate_limit,
    read_schema,
)

BASE = {"kafka.bootstrap.servers": "127.0.0.1:9092", "subscribe": "t"}


def refused(options: dict[str, str], *, stream: bool = False) -> str:
    with pytest.raises(ReadOptionError) as exc:
        (stream_options if stream else batch_options)(options)
    return str(exc.value)


def test_defaults_and_lower_cased_keys() -> None:
    opts = batch_options({"kafka.bootstrap.servers": "h:1", "subscribe": " a, b ,a", "includeheaders": "true"})
    assert opts.topics == ("a", "b") and opts.starting == EARLIEST and opts.ending == LATEST
    assert opts.include_headers and opts.fail_on_data_loss and not opts.read_committed
    assert opts.kafka == {"bootstrap.servers": "h:1"}
    assert stream_options(BASE).starting == LATEST


def test_exactly_one_subscription_option() -> None:
    assert refused({"kafka.bootstrap.servers": "h:1"}) == (
        "One of the following options must be specified for Kafka source: subscribe, subscribepattern, assign. "
        "See the docs for more details."
    )
    assert refused({**BASE, "assign": '{"t":[0]}'}).startswith("Only one of the following options can be specified")
    assert "'subscribe' is ' , '" in refused({**BASE, "subscribe": " , "})
    assert "Pattern to subscribe is empty" in refused({"kafka.bootstrap.servers": "h", "subscribePattern": " "})
    assert "No topicpartitions to assign" in refused({"kafka.bootstrap.servers": "h", "assign": "t"})
    assert (
        refused({"kafka.bootstrap.servers": "h", "assign": "{bad"})
        == 'Expected e.g. {"topicA":[0,1],"topicB":[0,1]}, got {bad'
    )
    assert batch_options({"kafka.bootstrap.servers": "h", "assign": '{"t":[1,0]}'}).assigned == (("t", 1), ("t", 0))


def test_kafka_options_the_connector_refuses() -> None:
    assert "Kafka option 'auto.offset.reset' is not supported." in refused(
        {**BASE, "kafka.auto.offset.reset": "earliest"}
    )
    assert "keys are deserialized as byte arrays" in refused({**BASE, "kafka.key.deserializer": "x"})
    assert "values are deserialized as byte arrays" in refused({**BASE, "kafka.value.deserializer": "x"})
    assert (
        refused({**BASE, "kafka.enable.auto.commit": "false"}) == "Kafka option 'enable.auto.commit' is not supported"
    )
    assert refused({**BASE, "kafka.interceptor.classes": "x"}) == "Kafka option 'interceptor.classes' is not supported"
    assert (
        refused({"subscribe": "t"})
        == "Option 'kafka.bootstrap.servers' must be specified for configuring Kafka consumer"
    )
    assert "joins no consumer group" in refused({**BASE, "kafka.group.id": "g"})  # issue 29: it could mean nothing
    assert "isolation.level" in refused({**BASE, "kafka.isolation.level": "serializable"})
    assert batch_options({**BASE, "kafka.isolation.level": "read_committed"}).read_committed


def test_offsets_options_batch_and_stream() -> None:
    assert (
        refused({**BASE, "startingOffsets": "latest"}) == "starting offset can't be latest for batch queries on Kafka"
    )
    assert refused({**BASE, "startingOffsets": '{"t":{"0":-1}}'}) == (
        "startingOffsets for t-0 can't be latest for batch queries on Kafka"
    )
    assert (
        refused({**BASE, "endingOffsets": "earliest"}) == "ending offset can't be earliest for batch queries on Kafka"
    )
    assert refused({**BASE, "endingOffsets": '{"t":{"0":-2}}'}) == (
        "ending offset for t-0 can't be earliest for batch queries on Kafka"
    )
    assert refused({**BASE, "endingOffsets": "latest"}, stream=True) == "ending offset not valid in streaming queries"
    assert refused({**BASE, "endingTimestamp": "5"}, stream=True) == "ending timestamp not valid in streaming queries"
    assert refused({**BASE, "startingOffsets": "{oops"}).startswith('Expected e.g. {"topicA":{"0":23,"1":-1}')
    assert refused({**BASE, "startingTimestamp": "soon"}) == "Expected a single long value, got soon"
    opts = batch_options({**BASE, "startingOffsets": '{"t":{"0":3,"1":-2}}', "endingOffsets": '{"t":{"0":9,"1":-1}}'})
    assert opts.starting == OffsetLimit("offsets", {("t", 0): 3, ("t", 1): -2})
    assert "greater than its ending offset" in refused(
        {**BASE, "startingOffsets": '{"t":{"0":10}}', "endingOffsets": '{"t":{"0":9}}'}
    )
    assert "differ" in refused({**BASE, "startingOffsets": '{"t":{"0":1}}', "endingOffsets": '{"t":{"1":9}}'})
    # A timestamp wins over offsets, as in the connector.
    ts = batch_options({**BASE, "startingTimestamp": "1000", "startingOffsets": '{"t":{"0":1}}'})
    assert ts.starting == OffsetLimit("timestamp", timestamp=1000)
    assert "minOffsetPerTrigger(5) is higher" in refused(
        {**BASE, "minOffsetsPerTrigger": "5", "maxOffsetsPerTrigger": "2"}, stream=True
    )


def test_schema_is_the_connectors() -> None:
    assert read_schema({}).simpleString() == (
        "struct<key:binary,value:binary,topic:string,partition:int,offset:bigint,timestamp:timestamp,timestampType:int>"
    )
    assert read_schema({"includeheaders": "true"}).fieldNames()[-1] == "headers"


def test_plan_ranges_splits_large_partitions() -> None:
    starts = {("t", 0): 0, ("t", 1): 5, ("t", 2): 7}
    ends = {("t", 0): 10, ("t", 1): 5, ("t", 2): 8}
    assert plan_ranges(starts, ends, 4) == [
        OffsetRange("t", 0, 0, 3),
        OffsetRange("t", 0, 3, 6),
        OffsetRange("t", 0, 6, 10),
        OffsetRange("t", 2, 7, 8),
    ]
    split = plan_ranges({("t", 0): 0}, {("t", 0): 10}, 1000, min_partitions=3)
    assert [(r.start, r.end) for r in split] == [(0, 3), (3, 6), (6, 10)]


def test_rate_limit_shares_the_budget_by_backlog() -> None:
    starts = {("t", 0): 0, ("t", 1): 100, ("t", 2): 7}
    latest = {("t", 0): 90, ("t", 1): 110, ("t", 2): 7}
    assert rate_limit(starts, latest, 20) == {("t", 0): 18, ("t", 1): 102, ("t", 2): 7}
    assert rate_limit(starts, latest, 1000) == latest
    assert offsets_from_json(offsets_to_json(latest)) == latest
    assert offsets_to_json({("t", 1): 3, ("t", 0): 2}) == {"t": {"0": 2, "1": 3}}


def test_durations_are_spark_time_strings() -> None:
    assert duration_seconds("15m", "x") == 900
    assert duration_seconds("30s", "x") == 30
    assert duration_seconds("500", "x") == 0.5  # a bare number is milliseconds
    with pytest.raises(ReadOptionError, match="maxTriggerDelay"):
        duration_seconds("soon", "maxTriggerDelay")


def test_min_offsets_per_trigger_waits_until_enough_or_the_delay_passes() -> None:
    tp = ("t", 0)
    patient = KafkaStreamReader(read_schema(BASE), stream_options({**BASE, "minOffsetsPerTrigger": "100"}))
    assert patient._too_few({tp: 0}, {tp: 99})
    assert not patient._too_few({tp: 0}, {tp: 100})
    hasty = KafkaStreamReader(
        read_schema(BASE), stream_options({**BASE, "minOffsetsPerTrigger": "100", "maxTriggerDelay": "0s"})
    )
    assert not hasty._too_few({tp: 0}, {tp: 1})  # the delay has passed: a small micro-batch goes
    plain = KafkaStreamReader(read_schema(BASE), stream_options(BASE))
    assert not plain._too_few({tp: 0}, {tp: 1})
