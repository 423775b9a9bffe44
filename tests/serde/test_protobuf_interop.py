"""Protobuf: our bytes equal confluent-kafka's (imported files registered as references, nested
message indexes), and each side reads the other's, through one registry (confluent's logic)."""

from __future__ import annotations

import base64
from decimal import Decimal
from types import ModuleType

import pytest
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer as TheirDeserializer
from confluent_kafka.schema_registry.protobuf import ProtobufSerializer as TheirSerializer
from confluent_kafka.serialization import MessageField as TheirField
from confluent_kafka.serialization import SerializationContext as TheirContext
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from kafkawire.schema_registry import SchemaRegistryClient
from kafkawire.schema_registry.protobuf import (
    ProtobufDeserializer,
    ProtobufSerializer,
    _create_index_array,
    decimal_to_protobuf,
    protobuf_to_decimal,
)
from kafkawire.serialization import MessageField, SerializationContext, SerializationError
from tests.serde.registry_front import RegistryFront

F = descriptor_pb2.FieldDescriptorProto


def _files() -> tuple[type, type, type]:
    """kwtest/address.proto (Address) and kwtest/order.proto importing it (Order, Order.Line)."""
    pool = descriptor_pool.Default()
    try:
        pool.FindFileByName("kwtest/order.proto")
    except KeyError:
        dep = descriptor_pb2.FileDescriptorProto(name="kwtest/address.proto", package="kwtest", syntax="proto3")
        dep.message_type.add(name="Address").field.add(
            name="city", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL
        )
        main = descriptor_pb2.FileDescriptorProto(
            name="kwtest/order.proto", package="kwtest", syntax="proto3", dependency=["kwtest/address.proto"]
        )
        main.message_type.add(name="Unused").field.add(name="x", number=1, type=F.TYPE_INT32, label=F.LABEL_OPTIONAL)
        order = main.message_type.add(name="Order")
        order.field.add(name="id", number=1, type=F.TYPE_INT64, label=F.LABEL_OPTIONAL)
        order.field.add(
            name="ship_to", number=2, type=F.TYPE_MESSAGE, type_name=".kwtest.Address", label=F.LABEL_OPTIONAL
        )
        order.field.add(
            name="lines", number=3, type=F.TYPE_MESSAGE, type_name=".kwtest.Order.Line", label=F.LABEL_REPEATED
        )
        line = order.nested_type.add(name="Line")
        line.field.add(name="sku", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
        pool.Add(dep)
        pool.Add(main)
    get = message_factory.GetMessageClass
    return (
        get(pool.FindMessageTypeByName("kwtest.Order")),
        get(pool.FindMessageTypeByName("kwtest.Order.Line")),
        get(pool.FindMessageTypeByName("kwtest.Address")),
    )


Order, Line, Address = _files()
CTX = SerializationContext("orders", MessageField.VALUE)
THEIR_CTX = TheirContext("orders", TheirField.VALUE)


def test_top_level_message_with_a_reference(front: RegistryFront) -> None:
    ours = ProtobufSerializer(Order, SchemaRegistryClient({"url": front.url}))
    theirs = TheirSerializer(Order, front.registry)
    msg = Order(id=7, ship_to=Address(city="Oslo"), lines=[Line(sku="a"), Line(sku="b")])
    data = ours(msg, CTX)
    assert data == theirs(msg, THEIR_CTX)
    assert sorted(front.registry.get_subjects()) == ["kwtest/address.proto", "orders-value"]
    assert _create_index_array(Order.DESCRIPTOR) == [1]
    assert TheirDeserializer(Order)(data, THEIR_CTX) == msg
    assert ProtobufDeserializer(Order)(theirs(msg, THEIR_CTX), CTX) == msg


def test_nested_message_indexes(front: RegistryFront) -> None:
    ours = ProtobufSerializer(Line, SchemaRegistryClient({"url": front.url}))
    theirs = TheirSerializer(Line, front.registry)
    data = ours(Line(sku="z"), CTX)
    assert data == theirs(Line(sku="z"), THEIR_CTX)
    assert data is not None and data[5:8] == bytes([4, 2, 0])  # two indexes (zigzag): [1, 0]
    assert ProtobufDeserializer(Line)(data, CTX) == Line(sku="z")


def test_wrong_type_and_bad_payloads(front: RegistryFront) -> None:
    ours = ProtobufSerializer(Order, SchemaRegistryClient({"url": front.url}))
    with pytest.raises(SerializationError):
        ours(Line(sku="x"), CTX)
    good = ours(Order(id=1), CTX)
    assert good is not None
    de = ProtobufDeserializer(Order)
    for bad in [good[:4], good[:5] + b"\x7f", good[:6] + b"\x0a\xff"]:
        with pytest.raises(SerializationError):
            de(bad, CTX)


@pytest.mark.parametrize("text", ["0", "1.01", "-123456789123456789.56", "128", "-128", "0.001"])
def test_decimal_round_trip(text: str) -> None:
    value = Decimal(text)
    scale = max(0, -int(value.as_tuple().exponent))
    assert protobuf_to_decimal(decimal_to_protobuf(value, scale)) == value


def _tagged() -> type:
    """kwtest/person.proto: imports confluent/meta.proto, its ``ssn`` field tagged PII."""
    from kafkawire.schema_registry.confluent import meta_pb2

    pool = descriptor_pool.Default()
    try:
        pool.FindFileByName("kwtest/person.proto")
    except KeyError:
        fdp = descriptor_pb2.FileDescriptorProto(
            name="kwtest/person.proto", package="kwtest", syntax="proto3", dependency=["confluent/meta.proto"]
        )
        ssn = fdp.message_type.add(name="Person").field.add(
            name="ssn", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL
        )
        ssn.options.Extensions[meta_pb2.field_meta].tags.append("PII")
        pool.Add(fdp)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("kwtest.Person"))


def test_a_file_importing_confluent_meta(front: RegistryFront) -> None:
    """confluent/meta.proto is importable at confluent-kafka's path (renamed) and, as a file the
    registry knows, never registered as a reference; the field's tag reaches the registry."""
    from kafkawire.schema_registry.confluent import meta_pb2

    person = _tagged()
    field = person.DESCRIPTOR.fields_by_name["ssn"]
    assert list(field.GetOptions().Extensions[meta_pb2.field_meta].tags) == ["PII"]
    ours = ProtobufSerializer(person, SchemaRegistryClient({"url": front.url}), conf={"use.deprecated.format": False})
    theirs = TheirSerializer(person, front.registry, conf={"use.deprecated.format": False})
    msg = person(ssn="123")
    data = ours(msg, CTX)
    assert data == theirs(msg, THEIR_CTX)
    assert front.registry.get_subjects() == ["orders-value"]
    registered = descriptor_pb2.FileDescriptorProto.FromString(
        base64.b64decode(front.registry.get_latest_version("orders-value").schema.schema_str)
    )
    assert list(registered.dependency) == ["confluent/meta.proto"]
    assert list(registered.message_type[0].field[0].options.Extensions[meta_pb2.field_meta].tags) == ["PII"]
    assert ProtobufDeserializer(person, {"use.deprecated.format": False})(data, CTX) == msg


def _field_kinds() -> type:
    """kwtest/kinds.proto: a field of each kind the rule engine tells apart (scalars, a message,
    an enum, a repeated field, a map), one of them tagged."""
    from kafkawire.schema_registry.confluent import meta_pb2

    pool = descriptor_pool.Default()
    try:
        pool.FindFileByName("kwtest/kinds.proto")
    except KeyError:
        fdp = descriptor_pb2.FileDescriptorProto(
            name="kwtest/kinds.proto", package="kwtest", syntax="proto3", dependency=["confluent/meta.proto"]
        )
        fdp.enum_type.add(name="Colour").value.add(name="RED", number=0)
        kinds = fdp.message_type.add(name="Kinds")
        entry = kinds.nested_type.add(name="CountsEntry")
        entry.options.map_entry = True
        entry.field.add(name="key", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
        entry.field.add(name="value", number=2, type=F.TYPE_INT64, label=F.LABEL_OPTIONAL)
        scalars = ("STRING", "BYTES", "BOOL", "FLOAT", "DOUBLE", "INT32", "SINT32", "UINT64", "FIXED64", "SFIXED32")
        for number, name in enumerate(scalars, start=1):
            kinds.field.add(name=name.lower(), number=number, type=getattr(F, f"TYPE_{name}"), label=F.LABEL_OPTIONAL)
        tagged = kinds.field.add(name="ssn", number=20, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
        tagged.options.Extensions[meta_pb2.field_meta].tags.extend(["PII", "SECRET"])
        kinds.field.add(name="colour", number=21, type=F.TYPE_ENUM, type_name=".kwtest.Colour", label=F.LABEL_OPTIONAL)
        kinds.field.add(name="names", number=22, type=F.TYPE_STRING, label=F.LABEL_REPEATED)
        kinds.field.add(
            name="counts", number=23, type=F.TYPE_MESSAGE, type_name=".kwtest.Kinds.CountsEntry", label=F.LABEL_REPEATED
        )
        kinds.field.add(name="child", number=24, type=F.TYPE_MESSAGE, type_name=".kwtest.Kinds", label=F.LABEL_OPTIONAL)
        pool.Add(fdp)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("kwtest.Kinds"))


def test_field_tags_and_maps_as_confluent_kafkas() -> None:
    """is_map_field and get_inline_tags of each field, on both libraries."""
    import confluent_kafka.schema_registry.common.protobuf as their_common

    import kafkawire.schema_registry.protobuf as our_protobuf

    fields = _field_kinds().DESCRIPTOR.fields

    def kinds(module: ModuleType) -> list[tuple[str, bool, set[str]]]:
        return [(fd.name, bool(module.is_map_field(fd)), module.get_inline_tags(fd)) for fd in fields]

    ours, theirs = kinds(our_protobuf), kinds(their_common)
    assert ours == theirs
    assert ("counts", True, set()) in ours and ("ssn", False, {"PII", "SECRET"}) in ours
