"""kafkawire.serialization and kafkawire.error against confluent-kafka's own classes: same bytes,
same errors, same attributes."""

from __future__ import annotations

import math

import confluent_kafka.serialization as ck
import pytest
from confluent_kafka.error import KeySerializationError as CkKeySerializationError

from kafkawire import KafkaError, KafkaException
from kafkawire.error import (
    ConsumeError,
    KeyDeserializationError,
    KeySerializationError,
    ProduceError,
    ValueDeserializationError,
    ValueSerializationError,
)
from kafkawire.serialization import (
    Deserializer,
    DoubleDeserializer,
    DoubleSerializer,
    IntegerDeserializer,
    IntegerSerializer,
    MessageField,
    SerializationContext,
    SerializationError,
    Serializer,
    StringDeserializer,
    StringSerializer,
)

CTX = SerializationContext("t", MessageField.VALUE)
PAIRS = [
    (
        IntegerSerializer,
        ck.IntegerSerializer,
        IntegerDeserializer,
        ck.IntegerDeserializer,
        [0, 1, -1, 2**31 - 1, -(2**31), 123456],
    ),
    (
        DoubleSerializer,
        ck.DoubleSerializer,
        DoubleDeserializer,
        ck.DoubleDeserializer,
        [0.0, -0.0, 1.5, -3.25e300, math.inf, 5e-324],
    ),
    (
        StringSerializer,
        ck.StringSerializer,
        StringDeserializer,
        ck.StringDeserializer,
        ["", "ascii", "h\u00e9llo \u2603 \U0001f600"],
    ),
]


@pytest.mark.parametrize(("ours", "theirs", "our_de", "their_de", "values"), PAIRS)
def test_bytes_equal_confluent_and_read_back_both_ways(ours, theirs, our_de, their_de, values) -> None:  # type: ignore[no-untyped-def]
    for v in [*values, None]:
        data = ours()(v, CTX)
        assert data == theirs()(v, CTX)
        assert our_de()(data, CTX) == their_de()(data, CTX) == v


def test_string_codecs_and_type_errors() -> None:
    assert StringSerializer("utf_16")("x") == ck.StringSerializer("utf_16")("x")
    assert StringDeserializer("latin_1")(b"\xe9") == "\u00e9"
    with pytest.raises(SerializationError, match="Unsupported type"):
        StringSerializer()(b"bytes")
    with pytest.raises(SerializationError):
        StringSerializer("ascii")("\u00e9")
    with pytest.raises(SerializationError):
        StringDeserializer()(b"\xff")


def test_numbers_out_of_range_and_short_payloads_are_serialization_errors() -> None:
    with pytest.raises(SerializationError):
        IntegerSerializer()(2**31)
    with pytest.raises(SerializationError):
        IntegerSerializer()("1")
    with pytest.raises(SerializationError):
        IntegerDeserializer()(b"\x00\x01")
    with pytest.raises(SerializationError):
        DoubleDeserializer()(b"\x00" * 9)
    assert isinstance(SerializationError("x"), KafkaException)


def test_base_classes_and_context() -> None:
    with pytest.raises(NotImplementedError):
        Serializer()(1)
    with pytest.raises(NotImplementedError):
        Deserializer()(b"")
    ctx = SerializationContext("orders", MessageField.KEY, [("h", b"1")])
    assert (ctx.topic, ctx.field, ctx.headers) == ("orders", "key", [("h", b"1")])
    assert str(MessageField.VALUE) == "value" == ck.MessageField.VALUE.value


def test_client_errors_carry_code_cause_and_message() -> None:
    cause = ValueError("bad")
    for cls, code in [
        (KeySerializationError, KafkaError._KEY_SERIALIZATION),
        (ValueSerializationError, KafkaError._VALUE_SERIALIZATION),
    ]:
        e = cls(cause)
        assert isinstance(e, ProduceError) and isinstance(e, SerializationError)
        assert e.code == code and e.exception is cause and e.kafka_message is None
        assert e.args[0].str() == "bad"
    ck_err = CkKeySerializationError(cause)
    assert KeySerializationError(cause).name == ck_err.name == "_KEY_SERIALIZATION"
    msg = object()
    for cls, code in [
        (KeyDeserializationError, KafkaError._KEY_DESERIALIZATION),
        (ValueDeserializationError, KafkaError._VALUE_DESERIALIZATION),
    ]:
        e = cls(exception=cause, kafka_message=msg)
        assert isinstance(e, ConsumeError) and isinstance(e, SerializationError)
        assert (e.code, e.exception, e.kafka_message) == (code, cause, msg)
    ce = ConsumeError(KafkaError(KafkaError._PARTITION_EOF))
    assert ce.name == "_PARTITION_EOF" and ce.exception is None


def test_the_core_never_imports_the_optional_serdes() -> None:
    import subprocess
    import sys

    code = (
        "import sys, kafkawire, kafkawire.serialization, kafkawire.error;"
        "bad = [m for m in ('kafkawire.schema_registry', 'httpx', 'fastavro', 'jsonschema', 'google.protobuf')"
        " if m in sys.modules]; print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
