"""confluent.type.Decimal, differential: its descriptors (and the older confluent/types path), the
conversions of decimal_utils and of the protobuf serdes' decimal_to_protobuf/protobuf_to_decimal,
each on the same values with confluent-kafka's and kafkawire's modules, the bytes compared."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

import confluent_kafka.schema_registry.confluent.meta_pb2 as their_meta
import confluent_kafka.schema_registry.confluent.type.decimal_pb2 as their_pb2
import confluent_kafka.schema_registry.confluent.type.decimal_utils as their_utils
import confluent_kafka.schema_registry.confluent.types.decimal_pb2 as their_legacy
import confluent_kafka.schema_registry.protobuf as their_protobuf

import kafkawire.schema_registry.confluent.meta_pb2 as our_meta
import kafkawire.schema_registry.confluent.type.decimal_pb2 as our_pb2
import kafkawire.schema_registry.confluent.type.decimal_utils as our_utils
import kafkawire.schema_registry.confluent.types.decimal_pb2 as our_legacy
import kafkawire.schema_registry.protobuf as our_protobuf

DECIMALS = [
    Decimal(s)
    for s in (
        "0", "-0", "0.00", "1", "-1", "1.5", "-1.28", "-128", "127", "128", "255", "-129", "1E+2", "-1E+5",
        "12345678901234567890.123456789", "-9.999999999999999999999999999999", "1e-40", "3.14159", "0E-7",
    )
]  # fmt: skip
SCALES = [0, 1, 2, 5, -1, -3, 40]


def _outcome(call: Callable[[], Any]) -> Any:
    try:
        value = call()
    except Exception as e:
        return ("error", type(e).__name__, str(e))
    return ("ok", value.SerializeToString(deterministic=True) if hasattr(value, "SerializeToString") else value)


def test_the_descriptors_are_confluents() -> None:
    assert our_pb2._file().SerializeToString() == their_pb2.DESCRIPTOR.serialized_pb
    assert our_pb2.DESCRIPTOR.serialized_pb == their_pb2.DESCRIPTOR.serialized_pb
    assert our_legacy.DESCRIPTOR.serialized_pb == their_legacy.DESCRIPTOR.serialized_pb
    assert our_legacy.Decimal is our_pb2.Decimal and our_legacy.confluent_dot_type_dot_decimal__pb2 is our_pb2
    for name in ("FILE", "MESSAGE", "FIELD", "ENUM", "ENUM_VALUE"):
        assert getattr(our_meta, f"{name}_META_FIELD_NUMBER") == getattr(their_meta, f"{name}_META_FIELD_NUMBER")


def test_decimal_utils_as_confluents() -> None:
    for d in [*DECIMALS, Decimal("NaN"), Decimal("-Infinity")]:
        ours = _outcome(lambda d=d: our_utils.to_proto_decimal(d))
        assert ours == _outcome(lambda d=d: their_utils.to_proto_decimal(d)), d
        if ours[0] == "ok":
            read = their_pb2.Decimal.FromString(ours[1])
            back = our_utils.from_proto_decimal(read)
            assert str(back) == str(their_utils.from_proto_decimal(read)) and back == d
    for n in [*range(-300, 300), 2**63 - 1, -(2**63), 2**64, -(2**64), 10**40, -(10**40)]:
        assert our_utils.unscaled_to_bytes(n) == their_utils.unscaled_to_bytes(n), n
    assert str(our_utils.from_proto_decimal(our_pb2.Decimal(scale=3))) == str(
        their_utils.from_proto_decimal(their_pb2.Decimal(scale=3))
    )


def test_decimal_to_protobuf_as_confluents() -> None:
    seen = 0
    for d in DECIMALS:
        for scale in SCALES:
            ours = _outcome(lambda: our_protobuf.decimal_to_protobuf(d, scale))  # noqa: B023
            theirs = _outcome(lambda: their_protobuf.decimal_to_protobuf(d, scale))  # noqa: B023
            assert ours == theirs, (d, scale)
            if ours[0] == "ok":
                seen += 1
                message = their_pb2.Decimal.FromString(ours[1])
                assert str(our_protobuf.protobuf_to_decimal(message)) == str(
                    their_protobuf.protobuf_to_decimal(message)
                )
    assert 20 < seen < len(DECIMALS) * len(SCALES)  # some exact, some refused narrowings


def test_variant_type_as_confluent_kafkas() -> None:
    """confluent.type.Variant: the same file descriptor, the same bytes for the same fields, and
    each library reads the other's."""
    import confluent_kafka.schema_registry.confluent.type.variant_pb2 as theirs
    from google.protobuf import descriptor_pb2

    import kafkawire.schema_registry.confluent.type.variant_pb2 as ours

    files = []
    for module in (ours, theirs):
        fdp = descriptor_pb2.FileDescriptorProto()
        module.DESCRIPTOR.CopyToProto(fdp)
        files.append(fdp)
    assert files[0] == files[1]
    assert ours.Variant.DESCRIPTOR.full_name == "confluent.type.Variant"
    for fields in (
        {},
        {"metadata": b"\x01\x00\x00"},
        {"metadata": b"\x11\x01\x00\x01a", "value": b"\x02\x01\x00\x00\x01\x0c"},
    ):
        mine, reference = ours.Variant(**fields), theirs.Variant(**fields)
        assert mine.SerializeToString() == reference.SerializeToString()
        assert theirs.Variant.FromString(mine.SerializeToString()).value == fields.get("value", b"")
        assert ours.Variant.FromString(reference.SerializeToString()).metadata == fields.get("metadata", b"")


def test_the_protobuf_constants_as_confluent_kafkas() -> None:
    import confluent_kafka.schema_registry._sync.serde as their_serde
    import confluent_kafka.schema_registry.common.protobuf as their_common

    import kafkawire.schema_registry._sync.serde as our_serde

    names = ("DECIMAL_TYPE_NAME", "TIMESTAMP_TYPE_NAME", "PROTOBUF_TYPE", "MAX_EMAX", "MAX_PREC", "MIN_EMIN")
    names += ("ROUND_HALF_UP",)
    assert [getattr(our_protobuf, n) for n in names] == [getattr(their_common, n) for n in names]
    assert our_serde.DEFAULT_CACHE_CAPACITY == their_serde.DEFAULT_CACHE_CAPACITY


WIDE = [
    Decimal("9" * 4300),
    Decimal("-" + "9" * 4300 + "E-7"),
    Decimal("9" * 4301),
    Decimal("1" + "0" * 4300 + "E-4301"),
    Decimal("NaN"),
    Decimal("-Infinity"),
    Decimal("1E+2147483648"),  # scale -2**31: fits
    Decimal("1E+2147483649"),
    Decimal("1E-2147483647"),
    Decimal("1E-2147483648"),
]


def test_a_fields_decimal_write_back_as_confluent_kafkas() -> None:
    """What a field's write-back (common.protobuf's set_decimal_message) and a CEL rule's result
    writer encode, and what they refuse (non-finite, a coefficient past 4300 digits, a scale past
    int32) with which words: as confluent-kafka, value for value."""
    import confluent_kafka.schema_registry.common.protobuf as their_common
    import confluent_kafka.schema_registry.rules.cel.protobuf_result_writer as their_writer

    import kafkawire.schema_registry.rules.cel.protobuf_result_writer as our_writer

    assert our_protobuf.MAX_ENCODABLE_COEFFICIENT_DIGITS == their_common.MAX_ENCODABLE_COEFFICIENT_DIGITS
    assert our_writer.MAX_ENCODABLE_COEFFICIENT_DIGITS == their_writer.MAX_ENCODABLE_COEFFICIENT_DIGITS
    refused = 0
    for d in [*DECIMALS, *WIDE]:
        for ours_set, theirs_set in (
            (our_protobuf.set_decimal_message, their_common.set_decimal_message),
            (our_writer._set_decimal, their_writer._set_decimal),
        ):
            ours = _outcome(lambda: (m := their_pb2.Decimal(), ours_set(m, d), m)[2])  # noqa: B023
            theirs = _outcome(lambda: (m := their_pb2.Decimal(), theirs_set(m, d), m)[2])  # noqa: B023
            assert ours == theirs, (str(d)[:40], ours_set.__name__, ours[:3] if ours[0] == "error" else "ok")
            refused += ours[0] == "error"
    assert refused >= 2 * 4 + 1  # the non-finite pair and the 4301 digits twice each, a scale past int32
