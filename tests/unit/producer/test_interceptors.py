"""InterceptorChain semantics (the ProducerInterceptor javadoc seed), without a broker.

The few tests that build a `Producer` point it at a closed loopback port and never wait on it.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from kafkawire import KafkaError, KafkaException, Producer
from kafkawire.base.record_metadata import RecordMetadata
from kafkawire.producer.interceptors import InterceptorChain, load
from kafkawire.producer.producer_config import parse_producer_config
from kafkawire.producer.producer_record import ProducerRecord

LOGGER = "kafkawire.producer"


class Recorder:
    """Records every call; the dotted path ``tests.unit.producer.test_interceptors.Recorder`` loads it."""

    def __init__(self, tag: str = "recorder", log: list[tuple[Any, ...]] | None = None) -> None:
        self.tag = tag
        self.log: list[tuple[Any, ...]] = [] if log is None else log
        self.config: dict[str, Any] | None = None
        self.closed = 0

    def configure(self, config: dict[str, Any]) -> None:
        self.config = config
        self.log.append((self.tag, "configure"))

    def on_send(self, record: ProducerRecord) -> ProducerRecord:
        self.log.append((self.tag, "on_send", record.value))
        return record

    def on_acknowledgement(self, metadata: RecordMetadata, exception: KafkaException | None) -> None:
        self.log.append((self.tag, "on_acknowledgement", metadata, exception))

    def close(self) -> None:
        self.closed += 1
        self.log.append((self.tag, "close"))


class Appender(Recorder):
    """Appends its tag to the value and a header, returning a new record."""

    def on_send(self, record: ProducerRecord) -> ProducerRecord:
        super().on_send(record)
        headers = list(record.headers or [])
        headers.append(("by", self.tag.encode()))
        return ProducerRecord(
            record.topic,
            key=record.key,
            value=record.value + self.tag,
            partition=record.partition,
            timestamp=record.timestamp,
            headers=headers,
        )


class MutateThenRaise(Recorder):
    """Changes the record it was given in place, then fails: the change must not reach the next one."""

    def on_send(self, record: ProducerRecord) -> ProducerRecord:
        super().on_send(record)
        record.value = "half-done"
        record.topic = "elsewhere"
        record.headers.append(("leaked", b"1"))
        raise RuntimeError(f"{self.tag} on_send failed")


class ReturnsNone(Recorder):
    def on_send(self, record: ProducerRecord) -> Any:
        super().on_send(record)
        return None


class FailingAck(Recorder):
    def on_acknowledgement(self, metadata: RecordMetadata, exception: KafkaException | None) -> None:
        super().on_acknowledgement(metadata, exception)
        raise RuntimeError(f"{self.tag} on_acknowledgement failed")


class FailingClose(Recorder):
    def close(self) -> None:
        super().close()
        raise RuntimeError(f"{self.tag} close failed")


class NoHooks:
    """Has none of configure/on_send/on_acknowledgement/close."""

    def intercept(self) -> None:  # pragma: no cover - never called
        pass


class ExplodingConstructor(Recorder):
    def __init__(self) -> None:
        raise RuntimeError("cannot build me")


RECORDER_PATH = f"{__name__}.Recorder"


def metadata(topic: str = "t", partition: int = 0, offset: int = 5) -> RecordMetadata:
    return RecordMetadata(topic, partition, offset, 1_700_000_000_000, 1, 1, 1)


def record(**kw: Any) -> ProducerRecord:
    base: dict[str, Any] = {"topic": "orders", "value": "v", "key": b"k", "headers": [("h", b"0")]}
    base.update(kw)
    return ProducerRecord(**base)


@pytest.fixture
def closed_port() -> int:
    """A loopback port nothing listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


@pytest.fixture
def producer_conf(closed_port: int) -> dict[str, Any]:
    return {"bootstrap.servers": f"127.0.0.1:{closed_port}", "message.timeout.ms": 1000}


def make_producer(conf: dict[str, Any]) -> Producer:
    return Producer(conf)


@pytest.fixture
def producers() -> Iterator[list[Producer]]:
    made: list[Producer] = []
    yield made
    for p in made:
        with contextlib.suppress(KafkaException):  # already closed by the test
            p.purge()
        p.close(1)


# --- loading -------------------------------------------------------------------------------------


def test_load_from_class_instance_and_dotted_path() -> None:
    from_class = load(Recorder)
    assert type(from_class) is Recorder
    instance = Recorder("mine")
    assert load(instance) is instance
    from_path = load(RECORDER_PATH)
    assert type(from_path) is Recorder and from_path is not from_class


def test_chain_keeps_list_order_across_kinds() -> None:
    instance = Recorder("instance")
    chain = InterceptorChain([RECORDER_PATH, instance, Appender], {})
    assert [type(i) for i in chain.interceptors] == [Recorder, Recorder, Appender]
    assert chain.interceptors[1] is instance
    assert bool(chain) and not bool(InterceptorChain([], {}))


@pytest.mark.parametrize(
    ("spec", "reason"),
    [
        (NoHooks, "none of"),
        (NoHooks(), "none of"),
        (f"{__name__}.NoHooks", "none of"),
        ("tests.unit.no_such_module_here.Recorder", "cannot import"),
        (f"{__name__}.NoSuchClass", "no attribute"),
        ("Recorder", "dotted path"),
        (ExplodingConstructor, "cannot build me"),
    ],
)
def test_load_rejects_with_a_clear_invalid_arg(spec: Any, reason: str) -> None:
    with pytest.raises(KafkaException) as info:
        load(spec)
    error = info.value.args[0]
    assert error.code() == KafkaError._INVALID_ARG
    assert "interceptor.classes" in error.str()
    assert reason in error.str()


@pytest.mark.parametrize(
    "spec", [NoHooks, NoHooks(), f"{__name__}.NoHooks", "tests.unit.no_such_module_here.X", "not_dotted"]
)
def test_producer_construction_rejects_unusable_interceptors(spec: Any, producer_conf: dict[str, Any]) -> None:
    with pytest.raises(KafkaException) as info:
        Producer({**producer_conf, "interceptor.classes": [spec]})
    error = info.value.args[0]
    assert error.code() == KafkaError._INVALID_ARG
    assert "interceptor.classes" in error.str()


def test_a_rejected_interceptor_leaks_no_io_thread(producer_conf: dict[str, Any]) -> None:
    before = {t for t in threading.enumerate() if t.name == "kafkawire-io"}
    with pytest.raises(KafkaException):
        Producer({**producer_conf, "interceptor.classes": [f"{__name__}.NoHooks"]})
    leaked = {t for t in threading.enumerate() if t.name == "kafkawire-io"} - before
    assert not leaked


# --- configure -----------------------------------------------------------------------------------


def test_configure_gets_the_producer_config_with_the_default_client_id(closed_port: int) -> None:
    conf = parse_producer_config(
        {"bootstrap.servers": f"127.0.0.1:{closed_port}", "linger.ms": 7, "interceptor.classes": [RECORDER_PATH]}
    )
    chain = InterceptorChain(conf.interceptors, conf.raw)
    config = chain.interceptors[0].config
    assert config is not None
    assert config["client.id"] == "kafkawire"  # assigned by the producer when not given
    assert config["bootstrap.servers"] == f"127.0.0.1:{closed_port}"
    assert config["linger.ms"] == 7


def test_configure_through_a_real_producer_sees_the_users_client_id(
    producer_conf: dict[str, Any], producers: list[Producer]
) -> None:
    first, second = Recorder("first"), Recorder("second")

    class Meddler(Recorder):
        def configure(self, config: dict[str, Any]) -> None:
            config["client.id"] = "meddled"
            config["extra"] = 1

    producers.append(
        Producer({**producer_conf, "client.id": "my-app", "interceptor.classes": [first, Meddler, second]})
    )
    assert first.config is not None and first.config["client.id"] == "my-app"
    # Each gets its own copy: one interceptor's changes never reach the others (shared namespace).
    assert second.config is not None and second.config["client.id"] == "my-app"
    assert "extra" not in second.config
    assert first.log == [("first", "configure")]


# --- on_send -------------------------------------------------------------------------------------


def test_on_send_runs_in_list_order_each_getting_the_previous_record() -> None:
    log: list[tuple[Any, ...]] = []
    chain = InterceptorChain([Appender("a", log), Appender("b", log), Recorder("c", log)], {})
    out = chain.on_send(record(value="x"))
    assert [entry for entry in log if entry[1] == "on_send"] == [
        ("a", "on_send", "x"),
        ("b", "on_send", "xa"),
        ("c", "on_send", "xab"),
    ]
    assert out.value == "xab"
    assert out.headers == [("h", b"0"), ("by", b"a"), ("by", b"b")]


def test_on_send_does_not_change_the_callers_record() -> None:
    original = record(value="x")
    InterceptorChain([MutateThenRaise("m"), Appender("a")], {}).on_send(original)
    assert original == record(value="x")


def test_on_send_exception_is_logged_and_the_next_gets_the_last_good_record(
    caplog: pytest.LogCaptureFixture,
) -> None:
    log: list[tuple[Any, ...]] = []
    chain = InterceptorChain([Appender("a", log), MutateThenRaise("m", log), Recorder("c", log)], {})
    with caplog.at_level(logging.ERROR, logger=LOGGER):
        out = chain.on_send(record(value="x"))
    sends = [entry for entry in log if entry[1] == "on_send"]
    assert sends == [("a", "on_send", "x"), ("m", "on_send", "xa"), ("c", "on_send", "xa")]
    # The failing interceptor's in-place changes did not leak into the chain.
    assert out.value == "xa" and out.topic == "orders"
    assert out.headers == [("h", b"0"), ("by", b"a")]
    assert "m on_send failed" in caplog.text


def test_on_send_exception_in_the_first_passes_the_clients_record_on() -> None:
    log: list[tuple[Any, ...]] = []
    chain = InterceptorChain([MutateThenRaise("m", log), Appender("a", log)], {})
    out = chain.on_send(record(value="x"))
    assert ("a", "on_send", "x") in log
    assert out.value == "xa" and out.topic == "orders"
    assert out.headers == [("h", b"0"), ("by", b"a")]


@pytest.mark.parametrize("returned", [None, "a string", {"topic": "t"}])
def test_on_send_returning_a_non_record_is_ignored_and_logged(returned: Any, caplog: pytest.LogCaptureFixture) -> None:
    class Returns(Recorder):
        def on_send(self, record: ProducerRecord) -> Any:
            return returned

    log: list[tuple[Any, ...]] = []
    chain = InterceptorChain([Appender("a", log), Returns("r", log), Appender("b", log)], {})
    with caplog.at_level(logging.ERROR, logger=LOGGER):
        out = chain.on_send(record(value="x"))
    assert ("b", "on_send", "xa") in log
    assert out.value == "xab"
    assert "not a ProducerRecord" in caplog.text


def test_interceptors_without_on_send_are_skipped() -> None:
    class AckOnly:
        def on_acknowledgement(self, metadata: RecordMetadata, exception: KafkaException | None) -> None:
            pass

    chain = InterceptorChain([AckOnly, Appender("a")], {})
    assert chain.on_send(record(value="x")).value == "xa"


# --- on_acknowledgement ---------------------------------------------------------------------------


def test_on_acknowledgement_reaches_all_and_exceptions_are_logged_and_ignored(
    caplog: pytest.LogCaptureFixture,
) -> None:
    log: list[tuple[Any, ...]] = []
    chain = InterceptorChain([FailingAck("f", log), Recorder("r", log)], {})
    md = metadata()
    error = KafkaException(KafkaError(KafkaError._MSG_TIMED_OUT))
    with caplog.at_level(logging.ERROR, logger=LOGGER):
        chain.on_acknowledgement(md, None)
        chain.on_acknowledgement(md, error)
    acks = [entry for entry in log if entry[1] == "on_acknowledgement"]
    assert acks == [
        ("f", "on_acknowledgement", md, None),
        ("r", "on_acknowledgement", md, None),
        ("f", "on_acknowledgement", md, error),
        ("r", "on_acknowledgement", md, error),
    ]
    assert caplog.text.count("f on_acknowledgement failed") == 2


def test_on_send_error_acknowledges_with_no_partition_and_no_offset() -> None:
    log: list[tuple[Any, ...]] = []
    chain = InterceptorChain([Recorder("r", log)], {})
    error = KafkaException(KafkaError(KafkaError._INVALID_ARG, "bad"))
    chain.on_send_error(record(partition=-1), error)
    chain.on_send_error(record(partition=3), error)
    (_, _, first, exc1), (_, _, second, exc2) = [e for e in log if e[1] == "on_acknowledgement"]
    assert (first.topic, first.partition, first.offset, first.timestamp) == ("orders", -1, -1, -1)
    assert not first.has_offset() and not first.has_timestamp()
    assert second.partition == 3  # the partition the record asked for
    assert exc1 is error and exc2 is error


# --- close ------------------------------------------------------------------------------------------


def test_close_runs_once_per_interceptor_and_survives_failures(caplog: pytest.LogCaptureFixture) -> None:
    failing, plain = FailingClose("f"), Recorder("r")
    chain = InterceptorChain([failing, plain], {})
    with caplog.at_level(logging.ERROR, logger=LOGGER):
        chain.close()
        chain.close()
    assert failing.closed == 1 and plain.closed == 1
    assert "f close failed" in caplog.text


def test_close_from_many_threads_still_runs_once() -> None:
    plain = Recorder("r")
    chain = InterceptorChain([plain], {})
    barrier = threading.Barrier(8)

    def close() -> None:
        barrier.wait()
        chain.close()

    threads = [threading.Thread(target=close) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert plain.closed == 1


def test_producer_close_closes_interceptors_once(producer_conf: dict[str, Any]) -> None:
    plain = Recorder("r")
    producer = Producer({**producer_conf, "interceptor.classes": [plain]})
    assert plain.closed == 0
    producer.close(1)
    producer.close(1)
    assert plain.closed == 1


# --- through produce(), without a broker ------------------------------------------------------------


def test_on_send_runs_in_the_producing_thread_before_validation(
    producer_conf: dict[str, Any], producers: list[Producer]
) -> None:
    """``on_send`` runs before the producer checks the record: it may repair the topic name."""
    threads: list[str] = []

    class FixTopic(Recorder):
        def on_send(self, record: ProducerRecord) -> ProducerRecord:
            threads.append(threading.current_thread().name)
            return ProducerRecord(
                "fixed", key=record.key, value=record.value, partition=record.partition, timestamp=record.timestamp
            )

    producer = Producer({**producer_conf, "interceptor.classes": [FixTopic]})
    producers.append(producer)
    producer.produce("not a legal topic!", b"v")  # would raise _INVALID_ARG without the interceptor
    assert threads == [threading.current_thread().name]
    assert len(producer) == 1


def test_a_record_refused_by_produce_is_acknowledged_with_the_error(
    producer_conf: dict[str, Any], producers: list[Producer]
) -> None:
    plain = Recorder("r")
    producer = Producer({**producer_conf, "interceptor.classes": [plain]})
    producers.append(producer)
    with pytest.raises(KafkaException):
        producer.produce("not a legal topic!", b"v")
    acks = [entry for entry in plain.log if entry[1] == "on_acknowledgement"]
    assert len(acks) == 1
    md, exc = acks[0][2], acks[0][3]
    assert md.topic == "not a legal topic!" and md.partition == -1
    assert isinstance(exc, KafkaException) and exc.args[0].code() == KafkaError._INVALID_ARG


def test_a_sends_record_id_goes_through_the_interceptors_to_its_acknowledgement(
    producer_conf: dict[str, Any], producers: list[Producer]
) -> None:
    """``on_send`` sees the id of a ``send()``'s record and may change it: the record sent is the one
    acknowledged, with that id (here failed by a purge); a record refused is acknowledged with its
    id; one whose id ``on_send`` spoiled is refused naming it, and acknowledged without one."""
    seen: list[Any] = []

    class Renumber(Recorder):
        def on_send(self, record: ProducerRecord) -> ProducerRecord:
            seen.append(record.id)
            if record.id == 13:
                record.id = -13
            elif record.id is not None:
                record.id += 100
            return record

    plain = Renumber("r")
    producer = Producer({**producer_conf, "interceptor.classes": [plain]})
    producers.append(producer)
    sent = producer.send(ProducerRecord("t", b"k", b"v", id=1))
    unnamed = producer.send(ProducerRecord("t", b"k", b"v"))
    producer.purge()
    producer.poll(0)
    for fut in (sent, unnamed):
        with pytest.raises(KafkaException):
            fut.result(10)
    with pytest.raises(KafkaException):
        producer.send(ProducerRecord("not a legal topic!", b"v", id=3))
    with pytest.raises(ValueError, match="ProducerRecord id must be"):
        producer.send(ProducerRecord("t", b"v", id=13))
    assert seen == [1, None, 3, 13]
    acks = [(e[2].topic, e[2].record_id, e[3].args[0].code()) for e in plain.log if e[1] == "on_acknowledgement"]
    assert sorted(acks, key=str) == sorted(
        [
            ("t", 101, KafkaError._PURGE_QUEUE),
            ("t", None, KafkaError._PURGE_QUEUE),
            ("not a legal topic!", 103, KafkaError._INVALID_ARG),
            ("t", None, KafkaError._INVALID_ARG),
        ],
        key=str,
    )


def test_produce_batch_with_interceptors_refuses_the_rest_after_a_full_queue(
    producer_conf: dict[str, Any], producers: list[Producer]
) -> None:
    """The per-record path (interceptors) stops where the engine's bulk path does: the record that
    met the full queue and every later one get _QUEUE_FULL; interceptors saw only those tried."""
    plain = Recorder("r")
    producer = Producer({**producer_conf, "interceptor.classes": [plain], "queue.buffering.max.messages": 2})
    producers.append(producer)
    messages = [{"value": b"%d" % i} for i in range(5)]
    assert producer.produce_batch("t", messages) == 2
    assert [m.get("_error") and m["_error"].code() for m in messages] == [None, None] + [KafkaError._QUEUE_FULL] * 3
    assert [e[2] for e in plain.log if e[1] == "on_send"] == [b"0", b"1", b"2"]


def test_serializing_producer_interceptors_see_the_record_before_serialization(
    producer_conf: dict[str, Any], producers: list[Producer]
) -> None:
    """Kafka's ProducerInterceptor: ``on_send`` runs before the key and value are serialized, and
    the serializers work on the record it returns (its topic in their context)."""
    from kafkawire import SerializingProducer
    from kafkawire.serialization import StringSerializer

    seen: list[tuple[Any, Any, str]] = []
    contexts: list[str] = []

    class Rewrite(Recorder):
        def on_send(self, record: ProducerRecord) -> ProducerRecord:
            seen.append((record.key, record.value, record.topic))
            return ProducerRecord("rewritten", key=record.key, value=f"{record.value}!", headers=record.headers)

    def value_serializer(obj: Any, ctx: Any) -> bytes:
        contexts.append(ctx.topic)
        return StringSerializer()(obj, ctx)

    queued: list[tuple[Any, Any]] = []

    class Last(Recorder):
        def on_send(self, record: ProducerRecord) -> ProducerRecord:
            queued.append((record.key, record.value))
            return record

    plain = Recorder("r")
    producer = SerializingProducer(
        {
            **producer_conf,
            "interceptor.classes": [Rewrite, Last, plain],
            "key.serializer": StringSerializer(),
            "value.serializer": value_serializer,
        }
    )
    producers.append(producer)
    producer.produce("orders", key="k", value="v")
    assert seen == [("k", "v", "orders")]
    assert queued == [("k", "v!")]  # every interceptor sees objects, never bytes
    assert contexts == ["rewritten"]
    assert len(producer) == 1


def test_serializing_producer_reports_a_failed_serialization_to_the_interceptors(
    producer_conf: dict[str, Any], producers: list[Producer]
) -> None:
    """As the Java client's onSendError: a record that fails to serialize is acknowledged to the
    interceptors with the error, and ``produce()`` raises it; nothing is queued."""
    from kafkawire import SerializingProducer
    from kafkawire.error import ValueSerializationError

    def refuse(obj: Any, ctx: Any) -> bytes:
        raise ValueError("no")

    plain = Recorder("r")
    producer = SerializingProducer({**producer_conf, "interceptor.classes": [plain], "value.serializer": refuse})
    producers.append(producer)
    with pytest.raises(ValueSerializationError):
        producer.produce("orders", value=object())
    acks = [entry for entry in plain.log if entry[1] == "on_acknowledgement"]
    assert len(acks) == 1 and acks[0][2].topic == "orders" and isinstance(acks[0][3], ValueSerializationError)
    assert len(producer) == 0
