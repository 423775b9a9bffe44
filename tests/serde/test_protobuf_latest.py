"""Protobuf with the subject's latest schema (``use.latest.version``, ``use.latest.with.metadata``)
and the registry's serialized schema form, judged against confluent-kafka's serdes on one registry
(confluent's logic): the same requests (``format=serialized`` on every schema read), records
written with an older version migrated by the reader's JSONATA rules into the same message, and
the same refusals of the configuration."""

from __future__ import annotations

import base64
from typing import Any

import pytest

pytest.importorskip("jsonata")

from confluent_kafka.schema_registry import Rule as TheirRule
from confluent_kafka.schema_registry import RuleKind as TheirRuleKind
from confluent_kafka.schema_registry import RuleMode as TheirRuleMode
from confluent_kafka.schema_registry import RuleSet as TheirRuleSet
from confluent_kafka.schema_registry import Schema as TheirSchema
from confluent_kafka.schema_registry import SchemaRegistryClient as TheirClient
from confluent_kafka.schema_registry import ServerConfig
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer as TheirDeserializer
from confluent_kafka.schema_registry.protobuf import ProtobufSerializer as TheirSerializer
from confluent_kafka.schema_registry.rule_registry import RuleRegistry as TheirRuleRegistry
from confluent_kafka.schema_registry.rules.jsonata.jsonata_executor import JsonataExecutor as TheirJsonataExecutor
from confluent_kafka.serialization import MessageField as TheirField
from confluent_kafka.serialization import SerializationContext as TheirContext
from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory

from kafkawire.schema_registry import SchemaRegistryClient
from kafkawire.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from kafkawire.schema_registry.rule_registry import RuleRegistry
from kafkawire.schema_registry.rules.jsonata.jsonata_executor import JsonataExecutor
from kafkawire.serialization import MessageField, SerializationContext
from tests.serde.registry_front import RegistryFront

F = descriptor_pb2.FieldDescriptorProto
SUBJECT = "people-value"
CTX = SerializationContext("people", MessageField.VALUE)
THEIR_CTX = TheirContext("people", TheirField.VALUE)
UPGRADE = "$merge([$sift($, function($v, $k) {$k != 'size'}), {'height': $.'size'}])"
DOWNGRADE = "$merge([$sift($, function($v, $k) {$k != 'height'}), {'size': $.'height'}])"


def _person(version: int, size_field: str, size_number: int) -> Any:
    """kwlatest/person_vN.proto: Person {string name = 1; int32 <size_field> = <size_number>; Tag
    tag = 3} after an unrelated first message, with a nested message, as version ``version`` of a
    subject (v2's height is another field than v1's size: only a migration carries the value over)."""
    name = f"kwlatest/person_v{version}.proto"
    pool = descriptor_pool.Default()
    try:
        pool.FindFileByName(name)
    except KeyError:
        proto = descriptor_pb2.FileDescriptorProto(name=name, package=f"kwlatest.v{version}", syntax="proto3")
        proto.message_type.add(name="Unused").field.add(name="x", number=1, type=F.TYPE_INT32, label=F.LABEL_OPTIONAL)
        person = proto.message_type.add(name="Person")
        person.field.add(name="name", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
        person.field.add(name=size_field, number=size_number, type=F.TYPE_INT32, label=F.LABEL_OPTIONAL)
        person.field.add(
            name="tag",
            number=3,
            type=F.TYPE_MESSAGE,
            type_name=f".kwlatest.v{version}.Person.Tag",
            label=F.LABEL_OPTIONAL,
        )
        person.nested_type.add(name="Tag").field.add(name="label", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
        pool.Add(proto)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(f"kwlatest.v{version}.Person"))


PersonV1 = _person(1, "size", 2)
PersonV2 = _person(2, "height", 4)


def _b64(message_type: Any) -> str:
    return base64.standard_b64encode(message_type.DESCRIPTOR.file.serialized_pb).decode()


def _migrations() -> TheirRuleSet:
    rules = [
        TheirRule(
            "up",
            None,
            TheirRuleKind.TRANSFORM,
            TheirRuleMode.UPGRADE,
            "JSONATA",
            None,
            None,
            UPGRADE,
            None,
            None,
            False,
        ),
        TheirRule(
            "down",
            None,
            TheirRuleKind.TRANSFORM,
            TheirRuleMode.DOWNGRADE,
            "JSONATA",
            None,
            None,
            DOWNGRADE,
            None,
            None,
            False,
        ),
    ]
    return TheirRuleSet(rules, [], [])


def _two_versions(front: RegistryFront) -> None:
    """v1 (size) then v2 (height, with the rules converting between them) under SUBJECT."""
    front.registry.set_config(SUBJECT, ServerConfig(compatibility="NONE"))
    front.registry.register_schema(SUBJECT, TheirSchema(_b64(PersonV1), "PROTOBUF"))
    front.registry.register_schema(SUBJECT, TheirSchema(_b64(PersonV2), "PROTOBUF", [], None, _migrations()))


def _ours(message_type: Any, conf: dict[str, Any], front: RegistryFront) -> ProtobufDeserializer:
    rules = RuleRegistry()
    rules.register_executor(JsonataExecutor())
    return ProtobufDeserializer(message_type, conf, SchemaRegistryClient({"url": front.url}), rule_registry=rules)


def _theirs(message_type: Any, conf: dict[str, Any], front: RegistryFront) -> TheirDeserializer:
    rules = TheirRuleRegistry()
    rules.register_executor(TheirJsonataExecutor())
    return TheirDeserializer(message_type, conf, TheirClient({"url": front.url}), rule_registry=rules)


def _seen(front: RegistryFront, start: int) -> list[tuple[str, str, dict[str, list[str]]]]:
    """The requests since ``start``; booleans in one spelling (confluent-kafka's client sends
    Python's ``True``, ours ``true``: the registry reads either)."""

    def spelled(values: list[str]) -> list[str]:
        return [v.lower() if v in ("True", "False") else v for v in values]

    seen = zip(front.requests[start:], front.queries[start:], strict=True)
    return [(m, p, {k: spelled(v) for k, v in q.items()}) for (m, p), q in seen]


def _read_both(front: RegistryFront, reader_type: Any, conf: dict[str, Any], data: bytes) -> tuple[Any, Any]:
    """Our read and confluent-kafka's of ``data``, each with a client of its own; the requests
    each made are equal."""
    start = len(front.requests)
    ours = _ours(reader_type, conf, front)(data, CTX)
    middle = len(front.requests)
    theirs = _theirs(reader_type, conf, front)(data, THEIR_CTX)
    assert _seen(front, start)[: middle - start] == _seen(front, middle)
    return ours, theirs


def _same(ours: Any, theirs: Any) -> dict[str, Any]:
    assert ours.DESCRIPTOR.full_name == theirs.DESCRIPTOR.full_name
    assert ours.SerializeToString(deterministic=True) == theirs.SerializeToString(deterministic=True)
    found: dict[str, Any] = json_format.MessageToDict(ours, preserving_proto_field_name=True)
    assert found == json_format.MessageToDict(theirs, preserving_proto_field_name=True)
    return found


def test_an_older_record_is_upgraded_to_the_latest_schema(front: RegistryFront) -> None:
    _two_versions(front)
    client = SchemaRegistryClient({"url": front.url})
    old = ProtobufSerializer(PersonV1, client, {"auto.register.schemas": False})(
        PersonV1(name="ada", size=170, tag=PersonV1.Tag(label="x")), CTX
    )
    start = len(front.requests)
    ours, theirs = _read_both(front, PersonV2, {"use.latest.version": True}, old)
    assert _same(ours, theirs) == {"name": "ada", "height": 170, "tag": {"label": "x"}}
    # the reader schema's own message type, not the one given (as confluent-kafka answers)
    assert type(ours) is not PersonV2 and type(theirs) is not PersonV2
    reads = [(p, q) for m, p, q in _seen(front, start) if m == "GET" and not p.startswith("/associations/")]
    assert len(reads) == 4 and all(q.get("format") == ["serialized"] for p, q in reads), reads


def test_a_record_of_the_latest_version_is_not_migrated(front: RegistryFront) -> None:
    _two_versions(front)
    client = SchemaRegistryClient({"url": front.url})
    new = ProtobufSerializer(PersonV2, client, {"auto.register.schemas": False, "use.latest.version": True})(
        PersonV2(name="bo", height=180), CTX
    )
    ours, theirs = _read_both(front, PersonV2, {"use.latest.version": True}, new)
    assert _same(ours, theirs) == {"name": "bo", "height": 180}
    assert type(ours) is PersonV2 and type(theirs) is PersonV2


def test_serializing_with_the_latest_schema_asks_for_the_serialized_form(front: RegistryFront) -> None:
    _two_versions(front)
    conf = {"auto.register.schemas": False, "use.latest.version": True}
    start = len(front.requests)
    ours = ProtobufSerializer(PersonV2, SchemaRegistryClient({"url": front.url}), conf)(PersonV2(height=1), CTX)
    middle = len(front.requests)
    theirs = TheirSerializer(PersonV2, TheirClient({"url": front.url}), conf)(PersonV2(height=1), THEIR_CTX)
    assert ours == theirs
    assert _seen(front, start)[: middle - start] == _seen(front, middle)
    assert [q.get("format") for _, p, q in _seen(front, middle) if p.endswith("/latest")] == [["serialized"]]


def test_the_reader_schema_s_references_are_read_serialized(front: RegistryFront) -> None:
    """A reader schema importing another file: the imported file is fetched as a version of its
    subject in the serialized form (and deleted versions allowed), as confluent-kafka fetches it."""
    from tests.serde.test_protobuf_interop import Address, Line, Order

    ctx, their_ctx = SerializationContext("orders", MessageField.VALUE), TheirContext("orders", TheirField.VALUE)
    order = Order(id=7, ship_to=Address(city="Oslo"), lines=[Line(sku="a")])
    data = TheirSerializer(Order, front.registry)(order, their_ctx)
    start = len(front.requests)
    ours = _ours(Order, {"use.latest.version": True}, front)(data, ctx)
    middle = len(front.requests)
    theirs = _theirs(Order, {"use.latest.version": True}, front)(data, their_ctx)
    assert ours == theirs == order
    seen = _seen(front, start)[: middle - start]
    assert seen == _seen(front, middle)
    assert (
        "GET",
        "/subjects/kwtest%2Faddress.proto/versions/1",
        {"deleted": ["true"], "format": ["serialized"]},
    ) in seen


@pytest.mark.parametrize(
    "conf",
    [
        {"use.latest.version": "yes"},
        {"use.latest.with.metadata": ["app", "1"]},
        {"use.latest.version": 1},
        {"use.latest.with.metadata": "app=1"},
    ],
)
def test_the_deserializer_s_latest_options_are_refused_alike(conf: dict[str, Any]) -> None:
    with pytest.raises(ValueError) as theirs:
        TheirDeserializer(PersonV2, conf)
    with pytest.raises(ValueError) as ours:
        ProtobufDeserializer(PersonV2, conf)
    assert type(ours.value) is type(theirs.value)


def test_a_newer_record_is_downgraded_to_the_version_with_the_metadata() -> None:
    """A reader pinned to v1 by metadata reads v2's records through v2's DOWNGRADE rule. (Our
    mock:// registry: confluent-kafka's cannot find a schema with metadata again by lookup.)"""
    from kafkawire.schema_registry import Metadata, MetadataProperties, Schema, ServerConfig
    from kafkawire.schema_registry import RuleSet as OurRuleSet

    client = SchemaRegistryClient.new_client({"url": "mock://protobuf-downgrade"})
    client.set_config(SUBJECT, ServerConfig(compatibility="NONE"))
    for person, app, rules in ((PersonV1, "1", None), (PersonV2, "2", OurRuleSet.from_dict(_migrations().to_dict()))):
        metadata = Metadata(None, MetadataProperties({"app": app}), None)
        client.register_schema(SUBJECT, Schema(_b64(person), "PROTOBUF", [], metadata, rules))
    new = ProtobufSerializer(PersonV2, client, {"auto.register.schemas": False, "use.latest.version": True})(
        PersonV2(name="cy", height=150, tag=PersonV2.Tag(label="t")), CTX
    )
    rules = RuleRegistry()
    rules.register_executor(JsonataExecutor())
    reader = ProtobufDeserializer(PersonV1, {"use.latest.with.metadata": {"app": "1"}}, client, rule_registry=rules)
    old = reader(new, CTX)
    assert old.DESCRIPTOR.full_name == "kwlatest.v1.Person"
    assert json_format.MessageToDict(old, preserving_proto_field_name=True) == {
        "name": "cy",
        "size": 150,
        "tag": {"label": "t"},
    }
