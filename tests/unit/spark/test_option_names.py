"""The data source's strict options (issue 29): unknown names refused with the nearest known one,
kafka.* checked against the consumer's table on reads, the group options refused, and the driver's
look-ups made again per fetchOffset.numRetries / fetchOffset.retryIntervalMs. No session, no broker."""

from __future__ import annotations

import re

import pytest

from kafkawire.client.list_offsets import LATEST, list_offsets_operation
from kafkawire.core.kafka_error import KafkaError, KafkaException
from kafkawire.protocol import error_codes as ec
from kafkawire.protocol.apis import LIST_OFFSETS
from kafkawire.spark.options import READ_OPTIONS, STREAM_WRITE_OPTIONS, WRITE_OPTIONS, check_option_names
from kafkawire.spark.read_options import batch_options, stream_options
from kafkawire.spark.reader import look_up_tries
from tests.unit.stand_in import LeaderStub

BASE = {"kafka.bootstrap.servers": "127.0.0.1:9092", "subscribe": "t"}


def refused(options: dict[str, str], *, stream: bool = False) -> str:
    with pytest.raises(ValueError) as exc:
        (stream_options if stream else batch_options)(options)
    return str(exc.value)


@pytest.mark.parametrize(
    ("typo", "nearest"),
    [
        ("startingOffset", "startingOffsets"),
        ("startingoffset", "startingOffsets"),  # as Spark hands it over: lower-cased
        ("subscibe", "subscribe"),
        ("failOnDataloss ", "failOnDataLoss"),
        ("maxOffsetPerTrigger", "maxOffsetsPerTrigger"),
        ("kafak.bootstrap.servers", "kafka.bootstrap.servers"),
    ],
)
def test_a_read_typo_names_the_nearest_option(typo: str, nearest: str) -> None:
    message = refused({**BASE, typo: "x"})
    assert message == f"Unknown option '{typo}' for a kafkawire read. Did you mean '{nearest}'?"
    assert refused({**BASE, typo: "x"}, stream=True) == message


def test_an_option_far_from_any_lists_the_known_ones() -> None:
    assert "Known options: " in refused({**BASE, "topik": "t"})  # topic is a write option
    message = refused({**BASE, "path": "/data"})
    assert message.startswith("Unknown option 'path' for a kafkawire read. Known options: kafka.bootstrap.servers, ")
    assert message.endswith("kafka.*.")


def test_write_names() -> None:
    with pytest.raises(
        ValueError, match=re.escape("Unknown option 'topik' for a kafkawire write. Did you mean 'topic'?")
    ):
        check_option_names({"topik": "t"}, WRITE_OPTIONS, "write")
    with pytest.raises(
        ValueError, match=re.escape("Unknown option 'checkpointlocation' for a kafkawire write. Known options: ")
    ):
        check_option_names({"checkpointlocation": "/c"}, WRITE_OPTIONS, "write")  # a batch write has none
    stream = {"checkpointlocation": "/c", "queryname": "q", "topic": "t", "kafka.acks": "all"}
    check_option_names(stream, STREAM_WRITE_OPTIONS, "write")
    check_option_names({"schemaregistry.basic.auth.user.info": "u:p", "valueformat": "avro"}, READ_OPTIONS, "read")


def test_kafka_options_are_checked_against_the_consumer() -> None:
    message = refused({**BASE, "kafka.bogus.option": "1"})
    assert message == 'Invalid kafka.* option: No such configuration property: "bogus.option"'
    assert 'did you mean "fetch.max.bytes"' in refused({**BASE, "kafka.fetch.max.byte": "1"})
    assert "fetch.max.bytes" in refused({**BASE, "kafka.fetch.max.bytes": "lots"}, stream=True)
    assert (
        batch_options({**BASE, "kafka.client.id": "etl", "kafka.fetch.max.bytes": "1048576"}).kafka["client.id"]
        == "etl"
    )


def test_group_options_are_refused() -> None:
    for name in ("groupIdPrefix", "kafka.group.id"):
        message = refused({**BASE, name: "etl"})
        assert message.startswith(f"Option '{name}' is not supported: kafkawire reads")
        assert "joins no consumer group" in message
        assert refused({**BASE, name.lower(): "etl"}, stream=True) == message


def test_fetch_offset_options() -> None:
    opts = batch_options(BASE)
    assert (opts.offset_fetch_attempts, opts.offset_retry_interval) == (3, 0.01)  # the connector's defaults
    opts = batch_options({**BASE, "fetchOffset.numRetries": "5", "fetchoffset.retryintervalms": "250"})
    assert (opts.offset_fetch_attempts, opts.offset_retry_interval) == (5, 0.25)
    assert refused({**BASE, "fetchOffset.numRetries": "0"}) == "fetchOffset.numRetries must be positive"
    assert "must not be negative" in refused({**BASE, "fetchOffset.retryIntervalMs": "-1"})
    assert "whole number" in refused({**BASE, "fetchOffset.numRetries": "three"})


def test_look_ups_are_made_num_retries_times_retry_interval_apart(caplog: pytest.LogCaptureFixture) -> None:
    """fetchOffset.numRetries / retryIntervalMs are the request driver's `Tries` of each look-up:
    a ListOffsets refused twice is made a third time, 250 ms after each failure; refused three
    times, the last refusal is raised."""
    opts = batch_options({**BASE, "fetchOffset.numRetries": "3", "fetchOffset.retryIntervalMs": "250"})
    for refusals, offset in [(2, 7), (3, None)]:
        client = LeaderStub()
        codes = iter([ec.TOPIC_AUTHORIZATION_FAILED] * refusals + [0])
        client.handler = lambda call, codes=codes: {
            "topics": [{"name": "t", "partitions": [{"partition_index": 0, "error_code": next(codes), "offset": 7}]}]
        }
        caplog.clear()
        op = list_offsets_operation(client, {("t", 0): LATEST}, deadline=30.0, tries=look_up_tries(opts)).start()  # type: ignore[arg-type]
        client.engine.run()
        sent = [c.at for c in client.requests(LIST_OFFSETS)]
        assert sent == pytest.approx([0.0, 0.25, 0.5])
        if offset is None:
            with pytest.raises(KafkaException) as exc:
                op.future(("t", 0)).result(0)
            assert exc.value.args[0].code() == ec.TOPIC_AUTHORIZATION_FAILED
        else:
            assert op.future(("t", 0)).result(0).offset == offset
        warnings = [r.getMessage() for r in caplog.records if r.name == "kafkawire.spark"]
        assert len(warnings) == 2 and "attempt 1 of 3" in warnings[0]


@pytest.mark.parametrize(
    ("options", "partitioner", "idempotent", "acks", "in_flight"),
    [
        ({}, "murmur2_random", True, -1, 5),  # the Java producer's: keys as Java places them, idempotent
        ({"kafka.partitioner": "consistent_random"}, "consistent_random", True, -1, 5),
        ({"kafka.acks": "1"}, "murmur2_random", False, 1, 1_000_000),  # Java turns idempotence off quietly
        ({"kafka.request.required.acks": "0"}, "murmur2_random", False, 0, 1_000_000),
        ({"kafka.retries": "0"}, "murmur2_random", False, -1, 1_000_000),
        ({"kafka.acks": "all", "kafka.max.in.flight": "3"}, "murmur2_random", True, -1, 3),
        ({"kafka.enable.idempotence": "false"}, "murmur2_random", False, -1, 1_000_000),
    ],
)
def test_the_writers_producer_takes_the_java_producers_defaults(
    options: dict[str, str], partitioner: str, idempotent: bool, acks: int, in_flight: int
) -> None:
    """Spark's connector writes with the Java producer; its defaults, where the options leave them."""
    from kafkawire.producer.producer_config import parse_producer_config
    from kafkawire.spark.options import producer_params

    c = parse_producer_config(producer_params({"kafka.bootstrap.servers": "127.0.0.1:9092", **options}))
    assert (c.partitioner, c.enable_idempotence, c.acks, c.max_in_flight) == (partitioner, idempotent, acks, in_flight)


@pytest.mark.parametrize(
    ("options", "linger_ms", "sticky_ms"),
    [
        ({}, 100.0, 200),  # unset: the writer's own, the sticky partition following it (twice linger)
        ({"kafka.linger.ms": "5"}, 5.0, 10),  # librdkafka's default, asked for, is kept
        ({"kafka.linger.ms": "0"}, 0.0, 0),
        ({"kafka.queue.buffering.max.ms": "20"}, 20.0, 40),  # the alias counts as set
        ({"kafka.Linger.ms": "7"}, 7.0, 14),  # any case
    ],
)
def test_the_writers_linger_default_applies_only_when_unset(
    options: dict[str, str], linger_ms: float, sticky_ms: int
) -> None:
    """A task's Arrow batches come at its pace: the writer lingers longer than a producer's 5 ms
    unless told otherwise (kafkawire.spark.options.write_linger_default)."""
    from kafkawire.producer.producer_config import parse_producer_config
    from kafkawire.spark.options import producer_params

    c = parse_producer_config(producer_params({"kafka.bootstrap.servers": "127.0.0.1:9092", **options}))
    assert (c.linger_ms, c.sticky_linger_ms) == (linger_ms, sticky_ms)


def test_the_writers_producer_refuses_what_java_refuses() -> None:
    """Idempotence asked for explicitly with acks=1, or more than 5 in flight left to Java's default
    idempotence: construction fails, as Java's ConfigException."""
    from kafkawire.producer.producer_config import parse_producer_config
    from kafkawire.spark.options import producer_params

    base = {"kafka.bootstrap.servers": "127.0.0.1:9092"}
    for extra in ({"kafka.enable.idempotence": "true", "kafka.acks": "1"}, {"kafka.max.in.flight": "6"}):
        with pytest.raises(KafkaException) as exc:
            parse_producer_config(producer_params({**base, **extra}))
        assert exc.value.args[0].code() == KafkaError._INVALID_ARG
