"""The producer's configuration: librdkafka's names, defaults and rules, and errors that say what to fix."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest

from kafkawire.base.config import CONNECTION_OPTIONS, Option, parse_config
from kafkawire.client.inert_properties import NO_EFFECT
from kafkawire.core.kafka_error import KafkaError, KafkaException
from kafkawire.producer.producer_config import (
    NOOP_OPTIONS,
    PARTITIONERS,
    PRODUCER_OPTIONS,
    ProducerConfig,
    parse_producer_config,
)
from kafkawire.records import compression

BASE = {"bootstrap.servers": "127.0.0.1:1"}
CODECS = {name: codec for codec, name in compression.CODEC_NAMES.items()}


def defaults() -> ProducerConfig:
    return parse_producer_config(BASE)


def error_of(conf: dict[str, Any]) -> str:
    """The _INVALID_ARG message for ``conf`` (which must be refused)."""
    with pytest.raises(KafkaException) as exc:
        parse_producer_config({**BASE, **conf})
    err = exc.value.args[0]
    assert isinstance(err, KafkaError) and err.code() == KafkaError._INVALID_ARG
    return err.str()


def on_delivery(err: Any, msg: Any) -> None:
    pass


class Interceptor:
    def on_send(self, record: Any) -> Any:
        return record


class ObjectPartitioner:
    def partition(self, key: bytes, partitions: list[int]) -> int:
        return partitions[0]


# --- defaults and names ------------------------------------------------------------------------


def test_defaults_are_librdkafkas_except_where_documented() -> None:
    c = defaults()
    assert (c.acks, c.linger_ms, c.batch_size, c.batch_num_messages) == (-1, 5.0, 1_000_000, 10_000)
    assert (c.queue_buffering_max_messages, c.queue_buffering_max_kbytes) == (100_000, 1_048_576)
    assert (c.message_max_bytes, c.compression_codec, c.compression_level) == (1_000_000, compression.NONE, -1)
    assert (c.partitioner, c.sticky_linger_ms) == ("consistent_random", 10)  # 10: twice linger.ms
    assert (c.retries, c.retry_backoff_ms, c.retry_backoff_max_ms) == (2**31 - 1, 100, 1000)
    assert (c.message_timeout_ms, c.request_timeout_ms, c.socket_timeout_ms) == (300_000, 30_000, 60_000)
    # Idempotence off, so in-flight requests are not capped at 5 (test_librdkafka_properties.py asks
    # librdkafka itself).
    assert (c.enable_idempotence, c.max_in_flight, c.statistics_interval_ms) == (False, 1_000_000, 0)
    assert (c.max_block_ms, c.delivery_reports, c.interceptors) == (0, "poll", [])
    assert (c.error_cb, c.throttle_cb, c.stats_cb, c.on_delivery) == (None, None, None, None)
    assert (c.transactional_id, c.transaction_timeout_ms) == (None, 60_000)
    assert (c.bootstrap_servers, c.client_id, c.topic_metadata_refresh_interval_ms) == (
        "127.0.0.1:1",
        "kafkawire",
        300_000,
    )


@pytest.mark.parametrize(
    ("key", "value", "attr", "expected"),
    [
        ("request.required.acks", 0, "acks", 0),
        ("queue.buffering.max.ms", 20, "linger_ms", 20.0),
        ("message.send.max.retries", 3, "retries", 3),
        ("delivery.timeout.ms", 9000, "message_timeout_ms", 9000),
        ("compression.codec", "zstd", "compression_codec", compression.ZSTD),
        ("max.in.flight", 7, "max_in_flight", 7),
        ("metadata.broker.list", "h:9", "bootstrap_servers", "h:9"),
    ],
)
def test_aliases_set_the_canonical_option(key: str, value: Any, attr: str, expected: Any) -> None:
    assert getattr(parse_producer_config({key: value}), attr) == expected


@pytest.mark.parametrize(
    ("conf", "attr", "expected"),
    [
        ({"acks": "all"}, "acks", -1),
        ({"acks": "ALL"}, "acks", -1),
        ({"acks": "1"}, "acks", 1),
        ({"linger.ms": "0.5"}, "linger_ms", 0.5),
        ({"linger.ms": 7}, "linger_ms", 7.0),
        ({"batch.size": "16384"}, "batch_size", 16384),
        ({"batch.size": 1e6}, "batch_size", 1_000_000),
        ({"batch.size": "1e6"}, "batch_size", 1),  # librdkafka's strtol reads "1"
        ({"batch.size": 1.5}, "batch_size", 1),
        ({"batch.size": "0x10"}, "batch_size", 16),
        ({"batch.size": 2**32 + 5}, "batch_size", 5),  # a C int
        ({"linger.ms": "5ms"}, "linger_ms", 5.0),
        ({"enable.idempotence": "TRUE"}, "enable_idempotence", True),
        ({"enable.idempotence": "t"}, "enable_idempotence", True),
        ({"enable.idempotence": 1}, "enable_idempotence", True),
        ({"enable.idempotence": "0"}, "enable_idempotence", False),
        ({"compression.type": "LZ4"}, "compression_codec", compression.LZ4),
        ({"delivery.reports": "background"}, "delivery_reports", "background"),
        ({"max.block.ms": "250"}, "max_block_ms", 250),
        ({"transactional.id": None}, "transactional_id", None),
        ({"on_delivery": on_delivery}, "on_delivery", on_delivery),
    ],
)
def test_values_as_python_values_or_strings(conf: dict[str, Any], attr: str, expected: Any) -> None:
    value = getattr(parse_producer_config({**BASE, **conf}), attr)
    assert value == expected and type(value) is type(expected)


def test_every_name_and_alias_is_unique() -> None:
    keys = [key for opt in PRODUCER_OPTIONS for key in (opt.name, *opt.aliases)]
    assert len(keys) == len(set(keys))


@pytest.mark.parametrize("name", PARTITIONERS)
def test_partitioner_names(name: str) -> None:
    assert parse_producer_config({"partitioner": name}).partitioner == name


def test_partitioner_callable_or_object_is_kept_as_given() -> None:
    def by_length(key: bytes, partitions: list[int]) -> int:
        return partitions[len(key) % len(partitions)]

    assert parse_producer_config({"partitioner": by_length}).partitioner is by_length
    obj = ObjectPartitioner()
    assert parse_producer_config({"partitioner": obj}).partitioner is obj


def test_interceptors_as_list_or_comma_separated_string() -> None:
    instance = Interceptor()
    conf = parse_producer_config({"interceptor.classes": [Interceptor, instance, "pkg.mod.Cls"]})
    assert conf.interceptors == [Interceptor, instance, "pkg.mod.Cls"]
    conf = parse_producer_config({"interceptor.classes": " a.B , c.d.E,,"})
    assert conf.interceptors == ["a.B", "c.d.E"]


def test_interceptor_list_is_never_shared() -> None:
    first, second = defaults(), defaults()
    first.interceptors.append("x.Y")
    assert second.interceptors == [] and defaults().interceptors == []


def test_raw_holds_effective_values_under_canonical_names() -> None:
    conf = parse_producer_config(
        {
            "metadata.broker.list": "h:1",
            "linger.ms": 3,
            "retries": 5,
            "transactional.id": "tx",
            "on_delivery": on_delivery,
        }
    )
    raw = conf.raw
    assert raw["bootstrap.servers"] == "h:1" and raw["linger.ms"] == 3.0 and raw["retries"] == 5
    assert raw["enable.idempotence"] is True and raw["message.timeout.ms"] == 60_000
    assert raw["on_delivery"] is on_delivery and "metadata.broker.list" not in raw
    assert set(raw) == {opt.name for opt in PRODUCER_OPTIONS}
    # The IO client reads its own options out of it.
    client_view = parse_config(raw, CONNECTION_OPTIONS, ignore_unknown=True)
    assert client_view["socket.timeout.ms"] == 59_900 and client_view["max.in.flight.requests.per.connection"] == 5


def test_noop_options_are_accepted_and_each_says_why() -> None:
    assert {opt.name for opt in NOOP_OPTIONS} == {
        "api.version.request",
        "api.version.fallback.ms",
        "broker.version.fallback",
        "log_level",
        "log.thread.name",
    }  # ("debug" has an effect now: kafkawire.base.debug; connections.max.idle.ms too: io/broker.py)
    assert all(opt.noop for opt in NOOP_OPTIONS)
    # The other options without effect are librdkafka's, each with why (client/inert_properties.py).
    assert not any(opt.noop for opt in PRODUCER_OPTIONS if opt not in NOOP_OPTIONS and opt.name not in NO_EFFECT)
    conf = parse_producer_config(
        {
            "api.version.request": False,
            "log_level": 7,
            "logger": logging.getLogger("x"),
            "debug": "broker, msg",
            "socket.nagle.disable": "false",
            "broker.version.fallback": "0.9.0",
        }
    )
    assert conf.raw["debug"] == ["broker", "msg"]


def test_default_topic_config_applies_in_order() -> None:
    # Deprecated but still written: its keys apply where the dict stands (a later key wins).
    assert (
        parse_producer_config(
            {"message.timeout.ms": 600_000, "default.topic.config": {"message.timeout.ms": 1000}}
        ).message_timeout_ms
        == 1000
    )
    assert parse_producer_config({"default.topic.config": {"acks": 1}, "acks": "all"}).acks == -1
    with pytest.raises(KafkaException, match='No such configuration property: "bogus"'):
        parse_producer_config({"default.topic.config": {"bogus": 5}})
    with pytest.raises(KafkaException, match=r"default\.topic\.config"):
        parse_producer_config({"default.topic.config": "acks=1"})


def test_logger_is_a_logger_or_a_handler() -> None:
    for good in (logging.getLogger("x"), logging.LoggerAdapter(logging.getLogger("x"), {}), logging.NullHandler()):
        parse_producer_config({"logger": good})
    with pytest.raises(KafkaException, match='"logger"'):
        parse_producer_config({"logger": object()})


# --- every kind of mistake names the key (as written), the value and what is allowed -----------


def test_unknown_key_suggests_the_nearest_name() -> None:
    assert error_of({"linger.m": 5}) == 'No such configuration property: "linger.m" (did you mean "linger.ms"?)'
    assert '(did you mean "enable.idempotence"?)' in error_of({"enable.idempotance": True})
    assert '(did you mean "bootstrap.servers"?)' in error_of({"bootstrap.server": "h:1"})


def test_unknown_key_far_from_every_name_gets_no_suggestion() -> None:
    message = error_of({"walrus.tusk.count": "g"})
    assert message == 'No such configuration property: "walrus.tusk.count"'


@pytest.mark.parametrize(
    ("key", "value", "allowed"),
    [
        ("linger.ms", -0.5, "0..900000"),
        ("queue.buffering.max.ms", 900000.5, "0..900000"),
        ("batch.size", 0, "1..2147483647"),
        ("batch.num.messages", 1_000_001, "1..1000000"),
        ("queue.buffering.max.messages", -1, "0..2147483647"),
        ("queue.buffering.max.kbytes", 0, "1..2147483647"),
        ("message.max.bytes", 999, "1000..1000000000"),
        ("compression.level", 13, "-1..12"),
        ("retries", -1, "0..2147483647"),
        ("message.send.max.retries", -1, "0..2147483647"),
        ("retry.backoff.ms", 0, "1..300000"),
        ("retry.backoff.max.ms", 300_001, "1..300000"),
        ("message.timeout.ms", -1, "0..2147483647"),
        ("request.timeout.ms", 0, "1..900000"),
        ("statistics.interval.ms", 86_400_001, "0..86400000"),
        ("max.block.ms", -1, "0..2147483647"),
        ("transaction.timeout.ms", 999, "1000..2147483647"),
        ("socket.timeout.ms", 300_001, "10..300000"),
        ("log_level", 8, "0..7"),
    ],
)
def test_out_of_range(key: str, value: Any, allowed: str) -> None:
    message = error_of({key: value})
    assert f'Invalid value for configuration property "{key}": {value!r} (' in message
    assert f"allowed range is {allowed}" in message


@pytest.mark.parametrize(
    ("key", "value", "detail"),
    [
        ("linger.ms", "ms", "expected a number; allowed range is 0..900000"),
        ("linger.ms", None, "expected a number"),
        ("linger.ms", True, "expected a number"),
        ("linger.ms", float("inf"), "allowed range is 0..900000"),
        ("linger.ms", "nan", "expected a number"),
        ("batch.size", "x1", "expected an integer; allowed range is 1..2147483647"),
        ("batch.size", [1], "expected an integer"),
        ("enable.idempotence", "yes", "expected true or false"),
        ("enable.idempotence", 2, "expected true or false"),
        ("compression.type", "brotli", "allowed values are none, gzip, snappy, lz4, zstd"),
        ("compression.codec", "inherit", "allowed values are none, gzip, snappy, lz4, zstd"),
        ("delivery.reports", "later", "allowed values are poll, background"),
        ("acks", 2, "allowed values are -1, 0, 1, all"),
        ("acks", True, "allowed values are -1, 0, 1, all"),
        ("request.required.acks", "most", "allowed values are -1, 0, 1, all"),
        ("partitioner", "MURMUR2", "allowed values are random, consistent, consistent_random, murmur2"),
        ("partitioner", b"murmur2", "a callable, or an object with a partition() method"),
        ("partitioner", 5, "allowed values are random"),
        ("transactional.id", "", "expected a non-empty string"),
        # Sent in requests as a protocol STRING (int16 length of UTF-8): refused now, not on the IO thread.
        ("client.id", "app\udc80", "expected text that encodes as UTF-8 (no lone surrogates)"),
        ("client.id", "x" * 32_768, "expected at most 32767 bytes as UTF-8, got 32768"),
        ("transactional.id", "txn\ud800", "expected text that encodes as UTF-8"),
        ("transactional.id", "\u00e9" * 16_384, "expected at most 32767 bytes as UTF-8, got 32768"),
        ("on_delivery", "print", "expected a callable"),
        ("interceptor.classes", 5, "entry '5' is not a dotted path module.Class"),
        ("interceptor.classes", "Interceptor", "entry 'Interceptor' is not a dotted path module.Class"),
        ("interceptor.classes", ["a.b-c"], "entry 'a.b-c' is not a dotted path"),
        ("interceptor.classes", [5], "entry 5 is neither a dotted path nor a class or instance with on_send"),
        ("debug", "nope", "expected a comma-separated list of generic, broker"),
        ("debug", "", "expected a comma-separated list"),
        ("api.version.request", "maybe", "expected true or false"),
    ],
)
def test_bad_values(key: str, value: Any, detail: str) -> None:
    message = error_of({key: value})
    assert message.startswith(f'Invalid value for configuration property "{key}": ')
    assert detail in message


def test_protocol_strings_at_the_limit_are_accepted() -> None:
    conf = parse_producer_config({**BASE, "client.id": "\u00e9" * 16_383 + "x", "transactional.id": "t" * 32_767})
    assert len(conf.client_id.encode()) == 32_767 and conf.transactional_id == "t" * 32_767


# --- cross-field rules (librdkafka's rd_kafka_conf_finalize) -------------------------------------


@pytest.mark.parametrize(
    ("conf", "message"),
    [
        (
            {"reconnect.backoff.ms": 500, "reconnect.backoff.max.ms": 100},
            '"reconnect.backoff.max.ms" (100) must be >= "reconnect.backoff.ms" (500)',
        ),
        (
            {"retry.backoff.ms": 500, "retry.backoff.max.ms": 100},
            '"retry.backoff.max.ms" (100) must be >= "retry.backoff.ms" (500)',
        ),
        (
            {"linger.ms": 100, "message.timeout.ms": 100},
            '"message.timeout.ms" (100) must be greater than "linger.ms" (100.0)',
        ),
        (
            {"queue.buffering.max.ms": 10, "delivery.timeout.ms": 5},
            '"delivery.timeout.ms" (5) must be greater than "queue.buffering.max.ms" (10.0)',
        ),
        (
            {"enable.idempotence": True, "acks": 1},
            '"acks" (1) must be all (-1) when "enable.idempotence" is true',
        ),
        (
            {"enable.idempotence": True, "max.in.flight": 6},
            '"max.in.flight" (6) must be <= 5 when "enable.idempotence" is true',
        ),
        (
            {"enable.idempotence": True, "message.send.max.retries": 0},
            '"message.send.max.retries" (0) must be >= 1 when "enable.idempotence" is true',
        ),
        (
            {"transactional.id": "tx", "enable.idempotence": "false"},
            '"transactional.id" requires "enable.idempotence" to be true, not "enable.idempotence" (False)',
        ),
        (
            {"transactional.id": "tx", "request.required.acks": 0},
            '"request.required.acks" (0) must be all (-1) when "enable.idempotence" is true',
        ),
        (
            {"transactional.id": "tx", "socket.timeout.ms": 60_101},
            '"socket.timeout.ms" (60101) must be <= "transaction.timeout.ms" (60000) + 100',
        ),
        (
            {"transactional.id": "tx", "delivery.timeout.ms": 60_001},
            '"delivery.timeout.ms" (60001) must be <= "transaction.timeout.ms" (60000)',
        ),
        (
            {"transactional.id": "tx", "transaction.timeout.ms": 5000, "linger.ms": 5000},
            '"message.timeout.ms" (5000) must be greater than "linger.ms" (5000.0)',
        ),
    ],
)
def test_conflicting_settings(conf: dict[str, Any], message: str) -> None:
    assert error_of(conf) == f"Invalid configuration: {message}"


def test_idempotence_adjusts_defaults_it_conflicts_with() -> None:
    c = parse_producer_config({"enable.idempotence": True})
    assert (c.acks, c.max_in_flight, c.retries) == (-1, 5, 2**31 - 1)
    c = parse_producer_config({"enable.idempotence": True, "max.in.flight": 3, "retries": 1, "acks": "all"})
    assert (c.acks, c.max_in_flight, c.retries) == (-1, 3, 1)


def test_transactional_id_enables_idempotence_and_bounds_timeouts() -> None:
    c = parse_producer_config({"transactional.id": "tx", "transaction.timeout.ms": 1000})
    assert c.enable_idempotence and c.transactional_id == "tx"
    assert (c.message_timeout_ms, c.socket_timeout_ms) == (1000, 900)
    c = parse_producer_config({"transactional.id": "tx", "socket.timeout.ms": 60_100, "message.timeout.ms": 60_000})
    assert (c.message_timeout_ms, c.socket_timeout_ms) == (60_000, 60_100)


def test_default_linger_yields_to_a_short_message_timeout() -> None:
    assert parse_producer_config({"message.timeout.ms": 3}).linger_ms == pytest.approx(2.9)
    # 0 is "no timeout": any linger.ms goes.
    assert parse_producer_config({"message.timeout.ms": 0, "linger.ms": 900_000}).linger_ms == 900_000.0


def test_batch_size_may_exceed_message_max_bytes() -> None:
    """As in librdkafka: the smaller of the two caps a batch; neither is an error."""
    c = parse_producer_config({"batch.size": 2_000_000_000, "message.max.bytes": 1000})
    assert (c.batch_size, c.message_max_bytes) == (2_000_000_000, 1000)


@pytest.mark.parametrize(
    ("codec", "good", "bad"),
    [("gzip", (0, 9), 10), ("lz4", (0, 12), None), ("zstd", (0, 12), None)],
)
def test_compression_level_depends_on_codec(codec: str, good: tuple[int, int], bad: int | None) -> None:
    for level in (-1, *good):
        assert parse_producer_config({"compression.type": codec, "compression.level": level}).compression_level == level
        compression.resolve_level(CODECS[codec], level)  # the records layer accepts it too
    if bad is not None:
        message = error_of({"compression.codec": codec, "compression.level": bad})
        assert message == (
            f'Invalid value {bad} for configuration property "compression.level" with "compression.codec" '
            f"{codec}: allowed values are -1 (the codec's default) or {good[0]}..{good[1]}"
        )


@pytest.mark.parametrize("codec", ["none", "snappy"])
def test_compression_level_is_ignored_without_levels(codec: str) -> None:
    c = parse_producer_config({"compression.type": codec, "compression.level": 5})
    assert c.compression_level == -1 and c.raw["compression.level"] == -1


# --- secrets ------------------------------------------------------------------------------------


SECRET = "hunter2-s3cret"


def _secret_validate(value: Any) -> Any:
    raise ValueError("expected a token of the form id:secret")


@pytest.mark.parametrize(
    "option",
    [
        Option("sasl.password", "str", None, sensitive=True, validate=_secret_validate),
        Option("sasl.password", "int", 0, 0, 10, sensitive=True),
        Option("sasl.password", "bool", False, sensitive=True),
        Option("sasl.password", "enum", "a", choices=("a", "b"), sensitive=True),
        Option("sasl.password", "callable", None, sensitive=True),
        Option("sasl.password", "object", None, sensitive=True, validate=_secret_validate),
        Option("sasl.password", "list", (), sensitive=True, validate=_secret_validate),
    ],
)
def test_sensitive_values_never_appear_in_errors(option: Option) -> None:
    value: Any = SECRET if option.kind != "str" else [SECRET]
    with pytest.raises(KafkaException) as exc:
        parse_config({"sasl.password": value}, [option])
    message = exc.value.args[0].str()
    assert SECRET not in message and "(hidden)" in message and '"sasl.password"' in message


def test_unknown_key_error_never_shows_the_value() -> None:
    assert SECRET not in error_of({"sasl.passwrd": SECRET})


# --- compatibility with confluent-kafka ----------------------------------------------------------

ck = pytest.importorskip("confluent_kafka")


def _fn(*args: Any) -> None:
    pass


def confluent_outcome(conf: dict[str, Any]) -> str:
    """The outcome for ``conf``: "ok", "invalid_arg", or the name of the exception raised."""
    try:
        producer = ck.Producer({"bootstrap.servers": "127.0.0.1:1", "log_level": 0, **conf})
    except ck.KafkaException as exc:
        assert exc.args[0].code() == ck.KafkaError._INVALID_ARG, exc
        return "invalid_arg"
    except Exception as exc:  # which exception it is, is the point of the comparison
        return type(exc).__name__
    producer.flush(0)
    del producer
    return "ok"


def our_outcome(conf: dict[str, Any]) -> str:
    try:
        parse_producer_config({"bootstrap.servers": "127.0.0.1:1", "log_level": 0, **conf})
    except KafkaException as exc:
        assert exc.args[0].code() == KafkaError._INVALID_ARG
        return "invalid_arg"
    except Exception as exc:  # (the classes confluent-kafka's binding raises)
        return type(exc).__name__
    return "ok"


# Configurations both clients must judge alike (True: refused with _INVALID_ARG).
AGREE: list[tuple[dict[str, Any], bool | str]] = [
    ({}, False),
    ({"acks": "all"}, False),
    ({"acks": "ALL"}, False),
    ({"acks": 0}, False),
    ({"acks": "1"}, False),
    ({"request.required.acks": -1}, False),
    ({"linger.ms": 0.5}, False),
    ({"linger.ms": "0.5"}, False),
    ({"linger.ms": "1e3"}, False),
    ({"queue.buffering.max.ms": 900_000, "message.timeout.ms": 0}, False),
    ({"batch.size": 1}, False),
    ({"batch.size": "16384"}, False),
    ({"batch.num.messages": 1_000_000}, False),
    ({"queue.buffering.max.messages": 0}, False),
    ({"queue.buffering.max.kbytes": 1}, False),
    ({"message.max.bytes": 1000}, False),
    ({"message.max.bytes": 1_000_000_000}, False),
    ({"batch.size": 2_000_000_000, "message.max.bytes": 1000}, False),
    ({"compression.type": "GZIP"}, False),
    ({"compression.codec": "zstd", "compression.level": 12}, False),
    ({"compression.type": "lz4", "compression.level": 12}, False),
    ({"compression.type": "gzip", "compression.level": 9}, False),
    ({"compression.type": "snappy", "compression.level": 5}, False),
    ({"compression.type": "none", "compression.level": 0}, False),
    *[({"partitioner": name}, False) for name in PARTITIONERS],
    ({"retries": 0}, False),
    ({"message.send.max.retries": 2**31 - 1}, False),
    ({"retry.backoff.ms": 1, "retry.backoff.max.ms": 300_000}, False),
    ({"message.timeout.ms": 0, "linger.ms": 100}, False),
    ({"delivery.timeout.ms": 3}, False),
    ({"request.timeout.ms": 900_000}, False),
    ({"enable.idempotence": "true"}, False),
    ({"enable.idempotence": "t"}, False),
    ({"enable.idempotence": 0}, False),
    ({"enable.idempotence": "F"}, False),
    ({"enable.idempotence": True, "acks": "all"}, False),
    ({"enable.idempotence": True, "max.in.flight": 5}, False),
    ({"enable.idempotence": True, "retries": 1}, False),
    ({"statistics.interval.ms": 1000, "stats_cb": _fn}, False),
    ({"error_cb": _fn, "throttle_cb": _fn, "on_delivery": _fn}, False),
    ({"transactional.id": "tx"}, False),
    ({"transactional.id": "tx", "transaction.timeout.ms": 1000}, False),
    ({"transactional.id": "tx", "socket.timeout.ms": 60_100, "message.timeout.ms": 60_000}, False),
    ({"transactional.id": "tx", "enable.idempotence": True}, False),
    ({"client.id": "me", "metadata.broker.list": "127.0.0.1:1", "security.protocol": "PLAINTEXT"}, False),
    ({"socket.timeout.ms": 300_000, "socket.connection.setup.timeout.ms": 1000}, False),
    ({"reconnect.backoff.ms": 0, "reconnect.backoff.max.ms": 0, "receive.message.max.bytes": 1000}, False),
    ({"max.in.flight.requests.per.connection": 1, "topic.metadata.refresh.interval.ms": -1}, False),
    ({"metadata.max.age.ms": 86_400_000, "api.version.request.timeout.ms": 300_000}, False),
    ({"api.version.request": False, "api.version.fallback.ms": 0, "broker.version.fallback": "0.9.0"}, False),
    ({"socket.keepalive.enable": True, "socket.nagle.disable": "false", "enable.metrics.push": False}, False),
    ({"log_level": 7, "logger": logging.getLogger("kafkawire.test")}, False),
    ({"debug": "broker, msg"}, False),
    ({"linger.m": 5}, True),
    ({"bootstrap.server": "127.0.0.1:1"}, True),
    ({"acks": -2}, True),
    ({"acks": "x"}, True),
    ({"acks": True}, True),
    ({"linger.ms": -0.5}, True),
    ({"linger.ms": 900_000.5}, True),
    ({"linger.ms": None}, True),
    ({"linger.ms": True}, True),
    ({"batch.size": 0}, True),
    ({"batch.size": True}, True),
    ({"batch.num.messages": 0}, True),
    ({"batch.num.messages": 1_000_001}, True),
    ({"queue.buffering.max.messages": -1}, True),
    ({"queue.buffering.max.kbytes": 0}, True),
    ({"message.max.bytes": 999}, True),
    ({"message.max.bytes": 1_000_000_001}, True),
    ({"compression.type": "brotli"}, True),
    ({"compression.codec": "inherit"}, True),
    ({"compression.level": 13}, True),
    ({"compression.level": -2}, True),
    ({"partitioner": "nope"}, True),
    ({"partitioner": "MURMUR2"}, True),
    ({"partitioner": ""}, True),
    ({"retries": -1}, True),
    ({"retry.backoff.ms": 0}, True),
    ({"retry.backoff.max.ms": 300_001}, True),
    ({"message.timeout.ms": -1}, True),
    ({"linger.ms": 100, "message.timeout.ms": 100}, True),
    ({"queue.buffering.max.ms": 10, "delivery.timeout.ms": 5}, True),
    ({"request.timeout.ms": 0}, True),
    ({"enable.idempotence": "yes"}, True),
    ({"enable.idempotence": 2}, True),
    ({"enable.idempotence": True, "acks": 1}, True),
    ({"enable.idempotence": True, "max.in.flight": 6}, True),
    ({"enable.idempotence": True, "retries": 0}, True),
    ({"statistics.interval.ms": 86_400_001}, True),
    ({"on_delivery": 5}, True),
    ({"transactional.id": "tx", "enable.idempotence": False}, True),
    ({"transactional.id": "tx", "acks": 0}, True),
    ({"transactional.id": "tx", "message.timeout.ms": 60_001}, True),
    ({"transactional.id": "tx", "socket.timeout.ms": 60_101}, True),
    ({"transaction.timeout.ms": 999}, True),
    ({"reconnect.backoff.ms": 500, "reconnect.backoff.max.ms": 100}, True),
    ({"socket.timeout.ms": 300_001}, True),
    ({"socket.timeout.ms": 9}, True),
    ({"socket.connection.setup.timeout.ms": 999}, True),
    ({"receive.message.max.bytes": 999}, True),
    ({"max.in.flight": 0}, True),
    ({"metadata.max.age.ms": 0}, True),
    ({"topic.metadata.refresh.interval.ms": -2}, True),
    ({"api.version.request.timeout.ms": 0}, True),
    ({"security.protocol": "carrier-pigeon"}, True),
    ({"log_level": 8}, True),
    ({"debug": "nope"}, True),
    ({"debug": ""}, True),
    ({"api.version.request": "maybe"}, True),
    ({"api.version.fallback.ms": -1}, True),
    ({"socket.nagle.disable": "x"}, True),
    ({"dr_msg_cb": _fn}, True),  # librdkafka's C callback slot; on_delivery is the Python one
    ({"default.topic.config": {"acks": 1}}, False),  # deprecated nesting of topic-level options
    ({"default.topic.config": {"linger.ms": 5}}, False),  # any option, as at the top level
    ({"default.topic.config": {"bogus.x": 5}}, True),
    ({"log.thread.name": False}, False),
    # Every librdkafka property is known; any object is taken as its str(), as confluent-kafka passes it.
    ({"client.id": 5}, False),
    ({"client.id": None}, False),
    ({"queue.buffering.backpressure.threshold": 1}, False),
    ({"sticky.partitioning.linger.ms": 10}, False),
    ({"delivery.report.only.error": True}, False),
    ({"enable.gapless.guarantee": False}, False),
    ({"message.copy.max.bytes": 65535}, False),
    ({"allow.auto.create.topics": False}, False),
    ({"socket.send.buffer.bytes": 65536, "socket.keepalive.enable": True}, False),
    ({"group.id": "g", "coordinator.query.interval.ms": 1000}, False),  # a consumer's, ignored with a warning
    ({"socket_cb": _fn}, True),  # a C API slot
    ({"enable.gapless.guarantee": 2}, True),
    ({"enable.idempotence": True, "enable.gapless.guarantee": True}, False),
    ({"enable.idempotence": False, "enable.gapless.guarantee": True}, True),
    ({"broker.address.family": "v5"}, True),
    ({"allow.auto.create.topics": "maybe"}, True),
    ({"connections.max.idle.ms": 540_000}, False),
    ({"connections.max.idle.ms": -1}, True),
    # Values as librdkafka reads the text confluent-kafka gives it (strtol/strtod, a C int).
    ({"acks": 1.5}, False),
    ({"acks": "-1.0"}, False),
    ({"batch.size": 1.5}, False),
    ({"batch.size": "12abc"}, False),
    ({"batch.size": "0x10"}, False),
    ({"linger.ms": "5ms"}, False),
    ({"batch.size": 2**32 + 5}, False),
    ({"on_delivery": None}, True),
    # The properties confluent-kafka's binding reads itself: its exception classes.
    ({"error_cb": 5}, "TypeError"),
    ({"error_cb": None}, "TypeError"),
    ({"throttle_cb": 5}, "ValueError"),
    ({"delivery.report.only.error": "true"}, "TypeError"),
]


def _callable_partitioner(key: bytes, partitions: list[int]) -> int:
    return 0


# Intentional differences: (configuration, whether kafkawire refuses it, why). The test checks
# that confluent-kafka still judges each the other way, so the list stays true.
DIFFERENCES: list[tuple[dict[str, Any], bool, str]] = [
    # kafkawire extensions confluent-kafka does not know
    ({"max.block.ms": 1000}, False, "kafkawire/Java extension: wait for buffer room instead of BufferError"),
    ({"delivery.reports": "background"}, False, "kafkawire extension: serve delivery reports from a thread"),
    ({"interceptor.classes": "pkg.mod.Interceptor"}, False, "kafkawire extension: Java-style interceptors"),
    ({"partitioner": _callable_partitioner}, False, "kafkawire extension: a callable partitioner"),
    ({"partitioner": ObjectPartitioner()}, False, "kafkawire extension: an object with partition()"),
    # stricter checking
    ({"acks": 2}, True, "brokers accept only -1, 0, 1; librdkafka takes -1..1000 and the broker refuses later"),
    ({"acks": 1000}, True, "as above"),
    ({"transactional.id": ""}, True, "an empty transactional id cannot be used with the broker"),
    ({"compression.type": "gzip", "compression.level": 10}, True, "gzip has levels 0-9 only"),
    ({"retry.backoff.ms": 500, "retry.backoff.max.ms": 100}, True, "librdkafka only warns and uses a static backoff"),
    (
        {"transactional.id": "tx", "transaction.timeout.ms": 5000, "linger.ms": 5000},
        True,
        "linger.ms must stay below the message timeout derived from transaction.timeout.ms; librdkafka misses it",
    ),
    # librdkafka features kafkawire does not implement (refused rather than silently ignored)
    ({"ssl.providers": "legacy"}, True, "Python's ssl module has no OpenSSL providers"),
]


def _ids(cases: list[Any]) -> Iterator[str]:
    """Stable test ids: functions and objects by name, never by address."""

    def shown(v: Any) -> str:
        if callable(v) or (hasattr(v, "partition") and not isinstance(v, str)):
            return getattr(v, "__name__", type(v).__name__)
        return repr(v)[:30]

    for case in cases:
        yield ",".join(f"{k}={shown(v)}" for k, v in case[0].items()) or "base"


@pytest.mark.parametrize(("conf", "refused"), AGREE, ids=list(_ids(AGREE)))
def test_agrees_with_confluent_kafka(conf: dict[str, Any], refused: bool | str) -> None:
    expected = refused if isinstance(refused, str) else "invalid_arg" if refused else "ok"
    assert our_outcome(conf) == expected
    assert confluent_outcome(conf) == expected


@pytest.mark.parametrize(("conf", "refused", "why"), DIFFERENCES, ids=list(_ids(DIFFERENCES)))
def test_documented_differences_from_confluent_kafka(conf: dict[str, Any], refused: bool, why: str) -> None:
    assert why
    assert our_outcome(conf) == ("invalid_arg" if refused else "ok")
    assert confluent_outcome(conf) != our_outcome(conf)


@pytest.mark.parametrize(
    "setting",
    [{"acks": 1}, {"acks": 0}, {"retries": 0}, {"max.in.flight.requests.per.connection": 6}],
)
def test_idempotence_left_unset_gives_way_to_explicit_settings(setting: dict[str, Any]) -> None:
    """As the Java client: on by default, quietly off when the user asked for what it cannot give."""
    conf = parse_producer_config({"bootstrap.servers": "h:1", **setting})
    assert conf.enable_idempotence is False


@pytest.mark.parametrize(
    "setting",
    [{"acks": 1}, {"acks": 0}, {"retries": 0}, {"max.in.flight.requests.per.connection": 6}],
)
def test_idempotence_set_explicitly_refuses_conflicting_settings(setting: dict[str, Any]) -> None:
    with pytest.raises(KafkaException) as exc:
        parse_producer_config({"bootstrap.servers": "h:1", "enable.idempotence": True, **setting})
    err = exc.value.args[0]
    assert err.code() == KafkaError._INVALID_ARG and "enable.idempotence" in err.str()
