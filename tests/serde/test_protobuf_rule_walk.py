"""The Protobuf field walk of data-contract rules, judged against confluent-kafka's: the same schema
(registered once, with its rules, through confluent's registry logic), the same message and the same
rule run through both clients' ProtobufSerializer and ProtobufDeserializer. What a field executor
observes (each field's ``full_name``, ``name``, type, tags and value), what it writes back, the bytes
written and a CEL_FIELD condition's verdict must be the same on both."""

from __future__ import annotations

import base64
import datetime
import decimal
from typing import Any

import pytest
from confluent_kafka.schema_registry import Rule as TheirRule
from confluent_kafka.schema_registry import RuleKind as TheirRuleKind
from confluent_kafka.schema_registry import RuleMode as TheirRuleMode
from confluent_kafka.schema_registry import RuleParams as TheirParams
from confluent_kafka.schema_registry import RuleSet as TheirRuleSet
from confluent_kafka.schema_registry import Schema as TheirSchema
from confluent_kafka.schema_registry import SchemaRegistryClient as TheirRegistryClient
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer as TheirDeserializer
from confluent_kafka.schema_registry.protobuf import ProtobufSerializer as TheirSerializer
from confluent_kafka.schema_registry.rule_registry import RuleRegistry as TheirRegistry
from confluent_kafka.schema_registry.serde import FieldRuleExecutor as TheirFieldRuleExecutor
from confluent_kafka.serialization import MessageField as TheirField
from confluent_kafka.serialization import SerializationContext as TheirContext
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, timestamp_pb2
from google.protobuf.message import Message

from kafkawire.schema_registry import SchemaRegistryClient
from kafkawire.schema_registry.common.rules import FieldRuleExecutor, FieldTransform
from kafkawire.schema_registry.confluent import meta_pb2
from kafkawire.schema_registry.confluent.type import decimal_pb2
from kafkawire.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from kafkawire.schema_registry.rule_registry import RuleRegistry
from kafkawire.serialization import MessageField, SerializationContext
from tests.serde.registry_front import RegistryFront
from tests.serde.test_encryption_rules import LOCAL, SECRET, dek_front, their_local_kms  # noqa: F401  # the DEK registry's fixtures

F = descriptor_pb2.FieldDescriptorProto
CTX = SerializationContext("walk", MessageField.VALUE)
THEIR_CTX = TheirContext("walk", TheirField.VALUE)
LATEST = {"auto.register.schemas": False, "use.latest.version": True}
PII = "PII"


def _walk_file(
    file_name: str, rename: bool = False, tagged: frozenset[str] | None = None
) -> descriptor_pb2.FileDescriptorProto:
    """One message with a field of each shape the walk tells apart, most of them tagged PII.
    ``rename``: the same numbers, two fields under other names (a compatible change), and ``note``
    tagged where ``score`` is not. ``tagged``: only the fields of these names are."""

    def _field(msg: Any, name: str, number: int, kind: str, tags: tuple[str, ...] = (), **kw: Any) -> Any:
        type_name = kw.pop("type_name", None)
        label = kw.pop("label", F.LABEL_OPTIONAL)
        fd = msg.field.add(name=name, number=number, type=getattr(F, f"TYPE_{kind}"), label=label, **kw)
        if type_name is not None:
            fd.type_name = type_name
        if tagged is not None:
            tags = (PII,) if name in tagged else ()
        fd.options.Extensions[meta_pb2.field_meta].tags.extend(tags)
        return fd

    fdp = descriptor_pb2.FileDescriptorProto(
        name=file_name,
        package="kwwalk",
        syntax="proto3",
        dependency=["confluent/meta.proto", "confluent/type/decimal.proto", "google/protobuf/timestamp.proto"],
    )
    line = fdp.message_type.add(name="Line")
    _field(line, "sku", 1, "STRING", (PII,))
    _field(line, "qty", 2, "INT32")
    walk = fdp.message_type.add(name="Walk")
    labels = walk.nested_type.add(name="LabelsEntry")
    labels.options.map_entry = True
    _field(labels, "key", 1, "STRING")
    _field(labels, "value", 2, "STRING")
    by_sku = walk.nested_type.add(name="BySkuEntry")
    by_sku.options.map_entry = True
    _field(by_sku, "key", 1, "STRING")
    _field(by_sku, "value", 2, "MESSAGE", type_name=".kwwalk.Line")
    walk.oneof_decl.add(name="choice")
    walk.oneof_decl.add(name="_nick")
    rep = F.LABEL_REPEATED
    _field(walk, "title" if rename else "name", 1, "STRING", (PII,))
    _field(walk, "names", 2, "STRING", (PII,), label=rep)
    _field(walk, "ids", 3, "INT32", (PII,), label=rep)
    _field(walk, "lines", 4, "MESSAGE", (PII,), label=rep, type_name=".kwwalk.Line")
    _field(walk, "labels", 5, "MESSAGE", (PII,), label=rep, type_name=".kwwalk.Walk.LabelsEntry")
    _field(walk, "by_sku", 6, "MESSAGE", (PII,), label=rep, type_name=".kwwalk.Walk.BySkuEntry")
    _field(walk, "email", 7, "STRING", (PII,), oneof_index=0)
    _field(walk, "phone", 8, "INT64", (PII,), oneof_index=0)
    _field(walk, "alt", 9, "MESSAGE", (PII,), oneof_index=0, type_name=".kwwalk.Line")
    _field(walk, "addr", 10, "MESSAGE", type_name=".kwwalk.Line")
    _field(walk, "nickname" if rename else "nick", 11, "STRING", (PII,), oneof_index=1, proto3_optional=True)
    _field(walk, "price", 12, "MESSAGE", (PII,), type_name=".confluent.type.Decimal")
    _field(walk, "at", 13, "MESSAGE", (PII,), type_name=".google.protobuf.Timestamp")
    _field(walk, "prices", 14, "MESSAGE", (PII,), label=rep, type_name=".confluent.type.Decimal")
    _field(walk, "note", 15, "STRING", (PII,) if rename else ())
    _field(walk, "score", 16, "DOUBLE", () if rename else (PII,))
    return fdp


def _classes() -> tuple[Any, Any]:
    pool = descriptor_pool.Default()
    decimal_pb2.Decimal  # noqa: B018  # the file is in the default pool once the module is imported
    timestamp_pb2.Timestamp  # noqa: B018
    try:
        pool.FindFileByName("kwwalk/walk.proto")
    except KeyError:
        pool.Add(_walk_file("kwwalk/walk.proto"))
    get = message_factory.GetMessageClass
    return get(pool.FindMessageTypeByName("kwwalk.Walk")), get(pool.FindMessageTypeByName("kwwalk.Line"))


Walk, Line = _classes()


def _dec(text: str) -> Any:
    from kafkawire.schema_registry.protobuf import decimal_to_protobuf

    value = decimal.Decimal(text)
    return decimal_to_protobuf(value, max(0, -int(value.as_tuple().exponent)))


def _full() -> Any:
    at = timestamp_pb2.Timestamp(seconds=1_700_000_000, nanos=5000)
    return Walk(
        name="ann",
        names=["a", "b"],
        ids=[1, 2],
        lines=[Line(sku="s1", qty=1), Line(sku="s2")],
        labels={"k": "v"},
        by_sku={"x": Line(sku="s3", qty=3)},
        email="e@x",
        addr=Line(sku="s4"),
        price=_dec("12.50"),
        at=at,
        prices=[_dec("1.5"), _dec("-2")],
        note="n",
        score=1.5,
    )


def _sparse() -> Any:
    """A oneof's other members, the optional field set, empty collections and unset messages."""
    return Walk(name="bo", phone=5, nick="nk")


def _alt() -> Any:
    return Walk(alt=Line(sku="s9"), nick="")


MESSAGES = {"full": _full, "sparse": _sparse, "alt": _alt}


def _shown(value: Any) -> Any:
    """A value as both sides can be compared on (protobuf containers and CEL values as plain)."""
    if isinstance(value, Message):
        return (value.DESCRIPTOR.full_name, value.SerializeToString(deterministic=True))
    if isinstance(value, dict):
        return {k: _shown(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_shown(v) for v in value]
    if hasattr(value, "items") and hasattr(value, "keys"):
        return {k: _shown(value[k]) for k in value}
    if hasattr(value, "__len__") and not isinstance(value, (str, bytes)):
        return [_shown(v) for v in value]
    return (type(value).__name__ if type(value).__module__ == "builtins" else "other", value)


def _observer(base: type) -> Any:
    class Observer(base):  # type: ignore[misc, valid-type]
        """Records what each field transform sees; upper-cases strings on write, lower on read."""

        def __init__(self) -> None:
            self.seen: list[Any] = []

        def type(self) -> str:
            return "OBSERVE"

        def new_transform(self, ctx: Any) -> Any:
            def transform(ctx: Any, field_ctx: Any, value: Any) -> Any:
                self.seen.append(
                    (
                        field_ctx.full_name,
                        field_ctx.name,
                        str(field_ctx.type_name()),
                        sorted(field_ctx.tags),
                        type(field_ctx.containing_message).__name__,
                        _shown(value),
                    )
                )
                if isinstance(value, str):
                    return value.upper() if str(ctx.rule_mode.value) == "WRITE" else value.lower()
                return value

            return transform if base is TheirFieldRuleExecutor else FieldTransform(transform)

    return Observer()


def _register(front: RegistryFront, rules: list[TheirRule], fdp: Any = None) -> None:
    fdp = fdp or _walk_file("kwwalk/walk.proto")
    text = base64.standard_b64encode(fdp.SerializeToString()).decode()
    front.registry.register_schema("walk-value", TheirSchema(text, "PROTOBUF", [], None, TheirRuleSet(None, rules)))


def _rule(rule_type: str, kind: str = "TRANSFORM", tags: list[str] | None = None, expr: str | None = None) -> Any:
    return TheirRule(
        "r", None, TheirRuleKind(kind), TheirRuleMode("WRITEREAD"), rule_type, tags, None, expr, None, None, False
    )


def _outcome(run: Any) -> Any:
    try:
        return "ok", run()
    except Exception as e:  # either client's failure: compared by kind
        return "error", type(e).__name__


def _cel() -> tuple[Any, Any]:
    from confluent_kafka.schema_registry.rules.cel.cel_field_executor import CelFieldExecutor as TheirCel

    from kafkawire.schema_registry.rules.cel.cel_field_executor import CelFieldExecutor

    return CelFieldExecutor(), TheirCel()


def _both(
    front: RegistryFront, make: Any, executors: tuple[Any, Any], rule_conf: dict[str, Any] | None = None
) -> tuple[Any, Any]:
    """Write ``make()`` with both serializers (the registry's latest schema), then read each one's
    bytes with the other's deserializer: each side's (written, read, what its executor saw)."""
    client, their_client = SchemaRegistryClient({"url": front.url}), TheirRegistryClient({"url": front.url})
    our_registry, their_registry = RuleRegistry(), TheirRegistry()
    our_registry.register_executor(executors[0])
    their_registry.register_executor(executors[1])
    ser = ProtobufSerializer(Walk, client, dict(LATEST), rule_conf, rule_registry=our_registry)
    their_ser = TheirSerializer(Walk, their_client, dict(LATEST), rule_conf, rule_registry=their_registry)
    written = _outcome(lambda: ser(make(), CTX))
    their_written = _outcome(lambda: their_ser(make(), THEIR_CTX))
    read = their_read = None
    if written[0] == "ok" and their_written[0] == "ok":
        de = ProtobufDeserializer(Walk, {}, client, rule_conf, rule_registry=our_registry)
        their_de = TheirDeserializer(Walk, {}, their_client, rule_conf, rule_registry=their_registry)
        read = _outcome(lambda: de(their_written[1], CTX).SerializeToString(deterministic=True))
        their_read = _outcome(lambda: their_de(written[1], THEIR_CTX).SerializeToString(deterministic=True))
    return (
        (written, read, getattr(executors[0], "seen", None)),
        (their_written, their_read, getattr(executors[1], "seen", None)),
    )


def _observers() -> tuple[Any, Any]:
    return _observer(FieldRuleExecutor), _observer(TheirFieldRuleExecutor)


@pytest.mark.parametrize("tags", [[PII], None])
@pytest.mark.parametrize("message", sorted(MESSAGES))
def test_a_field_executor_observes_what_confluent_kafkas_does(front: RegistryFront, message: str, tags: Any) -> None:
    _register(front, [_rule("OBSERVE", tags=tags)])
    ours, theirs = _both(front, MESSAGES[message], _observers())
    assert ours[2] == theirs[2]
    assert ours[:2] == theirs[:2]
    assert ours[0][0] == "ok"


@pytest.mark.parametrize("message", sorted(MESSAGES))
def test_names_and_tags_are_the_registered_schemas(front: RegistryFront, message: str) -> None:
    """The registered schema renamed two fields at their numbers and tags other fields: the rule
    sees its names and its tags, and the values of the message's own fields."""
    _register(front, [_rule("OBSERVE", tags=[PII])], _walk_file("kwwalk/walk.proto", rename=True))
    ours, theirs = _both(front, MESSAGES[message], _observers())
    assert ours[2] == theirs[2]
    assert ours[:2] == theirs[:2]
    seen = {entry[1] for entry in ours[2]}
    assert "name" not in seen and "nick" not in seen and "note" in seen
    if message != "alt":
        assert "title" in seen


CEL_TRANSFORMS = [
    "typeName == 'STRING' ? value + '-' : value",
    "name == 'ids' ? value + 1 : value",
    "value",
    "name == 'at' ? value + duration('1s') : value",
    "name == 'score' ? value * 2.0 : value",
]


@pytest.mark.parametrize("expr", CEL_TRANSFORMS)
@pytest.mark.parametrize("message", sorted(MESSAGES))
def test_cel_field_transforms_as_confluent_kafka(front: RegistryFront, message: str, expr: str) -> None:
    _register(front, [_rule("CEL_FIELD", tags=[PII], expr=expr)])
    ours, theirs = _both(front, MESSAGES[message], _cel())
    assert ours[:2] == theirs[:2]


CEL_CONDITIONS = [
    "name != 'name' || value == 'ann'",
    "name != 'ids' || value < 2",
    "name != 'sku' || value != 's2'",
    "name != 'at' || value > timestamp('2030-01-01T00:00:00Z')",
    "typeName != 'MAP'",
    "typeName != 'BYTES'",
]


@pytest.mark.parametrize("expr", CEL_CONDITIONS)
@pytest.mark.parametrize("message", sorted(MESSAGES))
def test_cel_field_conditions_as_confluent_kafka(front: RegistryFront, message: str, expr: str) -> None:
    _register(front, [_rule("CEL_FIELD", kind="CONDITION", tags=[PII], expr=expr)])
    ours, theirs = _both(front, MESSAGES[message], _cel())
    assert ours[:2] == theirs[:2]


# --- field-level encryption ------------------------------------------------------------------------

ENCRYPTED = {
    "strings": frozenset({"name", "names", "email", "nick", "sku", "note"}),
    "a map": frozenset({"name", "labels"}),
    "a decimal": frozenset({"name", "price"}),
    "a number": frozenset({"name", "ids"}),
}


@pytest.mark.parametrize("message", sorted(MESSAGES))
@pytest.mark.parametrize("tagged", sorted(ENCRYPTED))
def test_field_encryption_as_confluent_kafka(dek_front: Any, message: str, tagged: str) -> None:  # noqa: F811
    """Deterministic encryption (AES256_SIV) under one DEK: both clients write the same bytes, each
    decrypts the other's, and refuse the same fields."""
    from confluent_kafka.schema_registry.rules.encryption.encrypt_executor import (
        FieldEncryptionExecutor as TheirEncryption,
    )

    from kafkawire.schema_registry.rules.encryption.encrypt_executor import FieldEncryptionExecutor

    front, _ = dek_front
    params = {**LOCAL, "encrypt.dek.algorithm": "AES256_SIV"}
    rule = TheirRule(
        "enc",
        None,
        TheirRuleKind.TRANSFORM,
        TheirRuleMode.WRITEREAD,
        "ENCRYPT",
        [PII],
        TheirParams(params),
        None,
        None,
        "ERROR,ERROR",
        False,
    )
    _register(front, [rule], _walk_file("kwwalk/walk.proto", tagged=ENCRYPTED[tagged]))
    executors = FieldEncryptionExecutor(), TheirEncryption()
    ours, theirs = _both(front, MESSAGES[message], executors, {"secret": SECRET})
    assert ours[:2] == theirs[:2]
    if tagged == "strings":
        plain = MESSAGES[message]()
        assert ours[0][0] == "ok" and plain.SerializeToString() not in ours[0][1]
        assert ours[1] == ("ok", plain.SerializeToString(deterministic=True))


# --- the walk's public helpers, on the same inputs as confluent-kafka's ----------------------------


def _modules() -> tuple[Any, Any]:
    import confluent_kafka.schema_registry.common.protobuf as theirs

    import kafkawire.schema_registry.protobuf as ours

    return ours, theirs


def _result(run: Any) -> Any:
    try:
        value = run()
    except Exception as e:  # either client's failure: its kind and text
        return "error", type(e).__name__, str(e)
    return "ok", _shown(value)


def test_get_type_and_leaf_messages_as_confluent_kafkas() -> None:
    from kafkawire.schema_registry.confluent.type import variant_pb2

    ours, theirs = _modules()
    fields = [
        *Walk.DESCRIPTOR.fields,
        *Line.DESCRIPTOR.fields,
        *Walk.DESCRIPTOR.nested_types_by_name["BySkuEntry"].fields,
    ]
    assert [ours.get_type(fd).value for fd in fields] == [theirs.get_type(fd).value for fd in fields]
    assert ours.get_type(Walk.DESCRIPTOR.fields_by_name["ids"]).value == "INT"
    descriptors = [None, decimal_pb2.Decimal.DESCRIPTOR, timestamp_pb2.Timestamp.DESCRIPTOR]
    descriptors += [variant_pb2.Variant.DESCRIPTOR, Line.DESCRIPTOR, Walk.DESCRIPTOR]
    leaves = [ours.is_cel_leaf_message(d) for d in descriptors]
    assert leaves == [theirs.is_cel_leaf_message(d) for d in descriptors] == [False, True, True, False, False, False]


DECIMALS = [
    "0",
    "0.00",
    "1.50",
    "-12.345",
    "1E+3",
    "-128",
    "127",
    "123456789012345678901234567890.5",
    "NaN",
    "Infinity",
]


@pytest.mark.parametrize("text", DECIMALS)
def test_set_decimal_message_as_confluent_kafkas(text: str) -> None:
    ours, theirs = _modules()

    def write(module: Any) -> Any:
        target = decimal_pb2.Decimal()
        module.set_decimal_message(target, decimal.Decimal(text))
        return target

    mine, their = _result(lambda: write(ours)), _result(lambda: write(theirs))
    assert mine[:2] == their[:2]


UTC = datetime.timezone.utc
INSTANTS = [
    datetime.datetime(2024, 2, 29, 12, 30, 15, 123456),
    datetime.datetime(2024, 2, 29, 12, 30, 15, 123456, tzinfo=datetime.timezone(datetime.timedelta(hours=-5))),
    datetime.datetime(1969, 12, 31, 23, 59, 59, 500000, tzinfo=UTC),
    datetime.datetime(1, 1, 1, tzinfo=UTC),
    datetime.datetime(1970, 1, 1),
]


@pytest.mark.parametrize("instant", INSTANTS, ids=str)
def test_set_timestamp_message_as_confluent_kafkas(instant: datetime.datetime) -> None:
    ours, theirs = _modules()

    def write(module: Any) -> Any:
        target = timestamp_pb2.Timestamp()
        module.set_timestamp_message(target, instant)
        return target

    assert _result(lambda: write(ours)) == _result(lambda: write(theirs))


class _Bound:
    """A CEL binding of a message (what a rule echoes back), which carries it as ``msg``."""

    def __init__(self, msg: Any) -> None:
        self.msg = msg


REBUILT = {
    "null": lambda: None,
    "the message": lambda: _dec("1.5"),
    "a decimal": lambda: decimal.Decimal("-3.250"),
    "a datetime": lambda: datetime.datetime(2024, 1, 2, 3, 4, 5, 6000, tzinfo=UTC),
    "an int": lambda: 5,
    "a string": lambda: "x",
    "a bound timestamp": lambda: _Bound(timestamp_pb2.Timestamp(seconds=7, nanos=9)),
    "a bound decimal": lambda: _Bound(_dec("9.99")),
    "a timestamp": lambda: timestamp_pb2.Timestamp(seconds=7, nanos=9),
}


@pytest.mark.parametrize("field", ["price", "at", "prices"])
@pytest.mark.parametrize("value", sorted(REBUILT))
def test_rebuild_value_type_as_confluent_kafkas(field: str, value: str) -> None:
    ours, theirs = _modules()
    fd = Walk.DESCRIPTOR.fields_by_name[field]
    mine = _result(lambda: ours.rebuild_value_type(None, fd, REBUILT[value]()))
    their = _result(lambda: theirs.rebuild_value_type(None, fd, REBUILT[value]()))
    assert mine == their


def _rule_contexts(kind: str, tags: list[str] | None) -> tuple[Any, Any]:
    from confluent_kafka.schema_registry.serde import RuleContext as TheirRuleContext

    from kafkawire.schema_registry.common.rules import RuleContext
    from kafkawire.schema_registry.common.schema_registry_client import Rule, RuleKind, RuleMode

    mode = "WRITE"
    rule = Rule("r", None, RuleKind(kind), RuleMode.WRITEREAD, "OBSERVE", tags, None, None, None, None, False)
    their_rule = _rule("OBSERVE", kind, tags)
    ctx = RuleContext(None, None, None, "walk-value", RuleMode(mode), rule, 0, [rule], None, None)
    their_ctx = TheirRuleContext(
        None, None, None, None, "walk-value", TheirRuleMode(mode), their_rule, 0, [their_rule], None, None
    )
    return ctx, their_ctx


def _recorder(seen: list[Any]) -> Any:
    def transform(ctx: Any, field_ctx: Any, value: Any) -> Any:
        seen.append((field_ctx.full_name, field_ctx.name, field_ctx.type_name(), sorted(field_ctx.tags), _shown(value)))
        if ctx.rule.kind.value == "CONDITION":
            return not (isinstance(value, str) and value.startswith("s2"))
        return value + "!" if isinstance(value, str) else value

    return transform


INPUTS = {
    **{name: (lambda make=make: make()) for name, make in MESSAGES.items()},
    "a list": lambda: [_full(), _sparse()],
    "a dict": lambda: {"a": _alt()},
    "none": lambda: None,
}


@pytest.mark.parametrize("schema", ["own", "renamed"])
@pytest.mark.parametrize("kind", ["TRANSFORM", "CONDITION"])
@pytest.mark.parametrize("value", sorted(INPUTS))
def test_transform_as_confluent_kafkas(value: str, kind: str, schema: str) -> None:
    """``transform(ctx, descriptor, message, field_transform)`` called directly: the same fields seen
    the same way, the same result (the message changed in place) or the same condition failure."""
    ours, theirs = _modules()
    descriptor = Walk.DESCRIPTOR
    if schema == "renamed":
        from kafkawire.schema_registry._sync.protobuf import _add_known

        pool, added = descriptor_pool.DescriptorPool(), set[str]()
        for dependency in _walk_file("x.proto").dependency:
            _add_known(pool, descriptor_pool.Default().FindFileByName(dependency), added)
        pool.Add(_walk_file("kwwalk/renamed.proto", rename=True))
        descriptor = pool.FindMessageTypeByName("kwwalk.Walk")
    results = []
    for module, ctx in zip((ours, theirs), _rule_contexts(kind, [PII] if kind == "TRANSFORM" else None), strict=True):
        seen: list[Any] = []
        outcome = _result(lambda: module.transform(ctx, descriptor, INPUTS[value](), _recorder(seen)))  # noqa: B023
        results.append((outcome[:2], seen))
    assert results[0] == results[1]


def test_a_schema_with_references_names_the_referenced_files_fields(front: RegistryFront) -> None:
    """The registered schema imports another registered one (a reference): its message types come
    from that schema, with their tags, on both clients."""
    from tests.serde.test_protobuf_interop import Address, Order
    from tests.serde.test_protobuf_interop import Line as OrderLine

    def encoded(file: Any, tag: str | None) -> str:
        proto = descriptor_pb2.FileDescriptorProto.FromString(file.serialized_pb)
        if tag is not None:
            proto.dependency.append("confluent/meta.proto")
            proto.message_type[0].field[0].options.Extensions[meta_pb2.field_meta].tags.append(tag)
        return base64.standard_b64encode(proto.SerializeToString()).decode()

    from confluent_kafka.schema_registry import SchemaReference as TheirReference

    front.registry.register_schema(
        "kwtest/address.proto", TheirSchema(encoded(Address.DESCRIPTOR.file, PII), "PROTOBUF")
    )
    references = [TheirReference("kwtest/address.proto", "kwtest/address.proto", 1)]
    rules = TheirRuleSet(None, [_rule("OBSERVE", tags=[PII])])
    front.registry.register_schema(
        "walk-value", TheirSchema(encoded(Order.DESCRIPTOR.file, None), "PROTOBUF", references, None, rules)
    )
    client, their_client = SchemaRegistryClient({"url": front.url}), TheirRegistryClient({"url": front.url})
    seen = []
    for serializer, registry_client, ctx, executor, registry in (
        (ProtobufSerializer, client, CTX, _observer(FieldRuleExecutor), RuleRegistry()),
        (TheirSerializer, their_client, THEIR_CTX, _observer(TheirFieldRuleExecutor), TheirRegistry()),
    ):
        registry.register_executor(executor)
        ser = serializer(Order, registry_client, dict(LATEST), rule_registry=registry)
        data = ser(Order(id=1, ship_to=Address(city="oslo"), lines=[OrderLine(sku="a")]), ctx)
        seen.append((executor.seen, Order.FromString(data[7:]).ship_to.city))  # framing, index array [1]
    assert seen[0] == seen[1]
    assert seen[0][1] == "OSLO"


def test_a_schema_given_as_proto_text_names_fields_as_the_class_does(front: RegistryFront) -> None:
    """A registry may hand back .proto text rather than a serialized descriptor (confluent-kafka asks
    for the serialized form, which kafkawire does not): the walk then names and tags fields as the
    message's own class does, instead of failing the record."""
    from tests.serde.test_protobuf_interop import _tagged

    person = _tagged()
    text = 'syntax = "proto3";\npackage kwtest;\nmessage Person { string ssn = 1; }\n'
    rules = TheirRuleSet(None, [_rule("OBSERVE", tags=[PII])])
    front.registry.register_schema("walk-value", TheirSchema(text, "PROTOBUF", [], None, rules))
    observer, registry = _observer(FieldRuleExecutor), RuleRegistry()
    registry.register_executor(observer)
    ser = ProtobufSerializer(person, SchemaRegistryClient({"url": front.url}), dict(LATEST), rule_registry=registry)
    data = ser(person(ssn="abc"), CTX)
    assert person.FromString(data[6:]).ssn == "ABC"
    assert [entry[:4] for entry in observer.seen] == [("kwtest.Person.ssn", "ssn", "STRING", [PII])]
