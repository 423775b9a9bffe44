"""Protobuf with the Schema Registry: ProtobufSerializer and ProtobufDeserializer.

The schema registered is the message's .proto file as a base64 FileDescriptorProto (what
confluent-kafka sends); each imported file is registered first under its own subject
(``reference.subject.name.strategy``, by default the file's name) and named as a reference;
Google's and Confluent's well-known files are skipped (``skip.known.types``). The payload is the
framing, the message-index array (the message's path in its file) and the message's bytes.
"""

from __future__ import annotations

import base64
import decimal
import importlib
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory
from google.protobuf.descriptor import Descriptor, FileDescriptor
from google.protobuf.message import DecodeError, Message

from ...serialization import DeserializerBuilder, SerializationContext, SerializationError, SerializerBuilder
from ...serialization import MessageField as MessageField
from ..common.parsed_schema_cache import ParsedSchemaCache as ParsedSchemaCache
from ..common.protobuf_fields import DECIMAL_TYPE_NAME as DECIMAL_TYPE_NAME
from ..common.protobuf_fields import TIMESTAMP_TYPE_NAME as TIMESTAMP_TYPE_NAME
from ..common.protobuf_fields import transform as transform
from ..common.protobuf_fields import validate_message as validate_message
from ..common.schema_registry_client import RuleMode, RulePhase, Schema, SchemaReference
from ..common.schemas import PROTOBUF_TYPE as PROTOBUF_TYPE
from ..common.serde import SchemaId
from ..common.serde import clear_original_key as clear_original_key
from ..common.serde import dual_schema_id_deserializer as dual_schema_id_deserializer
from ..common.serde import prefix_schema_id_serializer as prefix_schema_id_serializer
from ..common.serde import set_original_key as set_original_key
from ..common.validation_rules import ValidationRulesExecution as ValidationRulesExecution
from ..confluent.type import decimal_pb2, variant_pb2
from ..confluent.type.decimal_utils import from_proto_decimal, unscaled_to_bytes
from ..confluent.type.variant_utils import Variant
from ..rule_registry import RuleRegistry
from .schema_registry_client import SchemaRegistryClient
from .serde import BaseDeserializer, BaseSerializer, _bool, _callable, where
from .serde_builder import RegistrySerdeBuilder
from .serde_builder import build_serde as build_serde

__all__ = [
    "ProtobufDeserializer",
    "ProtobufDeserializerBuilder",
    "ProtobufSerializer",
    "ProtobufSerializerBuilder",
    "decimal_to_protobuf",
    "protobuf_to_decimal",
    "protobuf_to_variant",
    "reference_subject_name_strategy",
    "variant_to_protobuf",
]

# Files a schema imports that are never registered as references (``skip.known.types``) nor
# fetched as one: Google's and Confluent's own, which every client has.
_KNOWN_PREFIXES = ("confluent/", "google/protobuf/", "google/type/")

_GOOGLE_PROTOBUF = "any source_context type api descriptor duration empty field_mask struct timestamp wrappers"
_GOOGLE_TYPE = "calendar_period color date datetime dayofweek expr fraction latlng money month postal_address"
_GOOGLE_TYPE += " quaternion timeofday"
# The well-known files a registered schema is read with (``_init_pool``), by module. Google's
# google.type files come with googleapis-common-protos (confluent-kafka requires it, kafkawire does
# not: without it they are left out). types.decimal: the old path of confluent.type.Decimal.
_WELL_KNOWN_MODULES = (
    *(f"google.protobuf.{name}_pb2" for name in _GOOGLE_PROTOBUF.split()),
    *(f"google.type.{name}_pb2" for name in _GOOGLE_TYPE.split()),
    *(f"..confluent.{name}_pb2" for name in ("meta", "type.decimal", "type.variant", "types.decimal")),
)


def _is_builtin(name: str) -> bool:
    """A file of Google's or Confluent's (by its name), which no registry subject holds."""
    return bool(name.startswith(_KNOWN_PREFIXES))


def _init_pool(pool: Any) -> None:
    """Puts the well-known files into ``pool``, each after what it imports: a registered schema may
    import them, and no reference to them is registered."""
    added: set[str] = set()
    for module in _WELL_KNOWN_MODULES:
        try:
            file = importlib.import_module(module, __package__).DESCRIPTOR
        except ModuleNotFoundError:  # google.type's, without googleapis-common-protos
            continue
        if file.name not in added:
            _add_known(pool, file, added)


def _bytes(v: int) -> bytes:
    """The one byte ``v``."""
    return bytes((v,))


def _proto_to_str(file_descriptor_proto: descriptor_pb2.FileDescriptorProto) -> str:
    """The schema text of a FileDescriptorProto: its bytes, base64."""
    return base64.standard_b64encode(file_descriptor_proto.SerializeToString()).decode("ascii")


def _str_to_proto(name: str, schema_str: str) -> descriptor_pb2.FileDescriptorProto:
    """A registered schema's text (a FileDescriptorProto, base64) read back as the file ``name``."""
    proto = descriptor_pb2.FileDescriptorProto()
    try:
        proto.ParseFromString(base64.standard_b64decode(schema_str.encode("ascii")))
        proto.name = name
    except DecodeError as e:
        raise SerializationError(str(e)) from e
    return proto


class _RegisteredMessages:
    """The registered schemas' message types, which name and tag the fields a rule walks: each
    schema (with the files it references, and the well-known files it imports) parsed once into a
    pool of its own. A schema that is not a serialized descriptor (.proto text a registry gave
    unconverted) has none: the walk then names fields as the message's own type does."""

    def __init__(self, registry: Any) -> None:
        self._registry = registry
        self._files: ParsedSchemaCache[Any] = ParsedSchemaCache()

    def find(self, schema: Schema, full_name: str | None, indexes: list[int] | None = None) -> Any:
        """The message ``full_name`` of ``schema``, else the one at ``indexes`` (the payload's), else None."""
        file = self._file(schema)
        if file is _UNREADABLE:
            return None
        found = file.pool.FindMessageTypeByName(full_name) if full_name in file.names else None
        if found is None and indexes:
            found = _message_at(file.file, indexes)
        return found

    def reader(self, schema: Schema, writer: Any) -> Any:
        """The message of reader ``schema`` that a payload of ``writer``'s message is read as: the
        top-level one of the same name, else the file's first (confluent-kafka's choice)."""
        file = self._file(schema)
        if file is _UNREADABLE:
            return None
        top = file.file.message_types_by_name
        named = top.get(writer.name) if writer is not None else None
        return named if named is not None else next(iter(top.values()), None)

    def _file(self, schema: Schema) -> _ParsedFile:
        file = self._files.get_parsed_schema(schema)
        if file is None:
            try:
                file = self._parse(schema)
            except (ValueError, TypeError, KeyError, SerializationError):  # base64, descriptor or pool refusals
                file = _UNREADABLE
            self._files.set(schema, file)
        return file

    def _parse(self, schema: Schema) -> Any:
        pool = descriptor_pool.DescriptorPool()
        _init_pool(pool)
        _resolve_named_schema(schema, self._registry, pool)
        pool.Add(_str_to_proto("default", schema.schema_str or ""))
        file = pool.FindFileByName("default")
        names = {m.full_name for m in _all_messages(file.message_types_by_name.values())}
        return _ParsedFile(pool, file, names)


def _resolve_named_schema(
    schema: Schema, schema_registry_client: SchemaRegistryClient, pool: Any, visited: set[str] | None = None
) -> None:
    """Adds to ``pool`` the files ``schema`` references, fetched from the registry, each after
    the ones it references; the well-known files (``_init_pool``'s) are not fetched."""
    visited = set() if visited is None else visited
    for ref in schema.references or ():
        if ref.name is None:
            raise ValueError("Name cannot be None")
        if _is_builtin(ref.name) or ref.name in visited:
            continue
        visited.add(ref.name)
        if ref.subject is None or ref.version is None:
            raise ValueError("Subject or version cannot be None")
        referenced = schema_registry_client.get_version(ref.subject, ref.version, True, "serialized")
        if referenced.schema.schema_str is None:
            raise ValueError("Schema string cannot be None")
        _resolve_named_schema(referenced.schema, schema_registry_client, pool, visited)
        pool.Add(_str_to_proto(ref.name, referenced.schema.schema_str))


@dataclass(frozen=True)
class _ParsedFile:
    pool: Any
    file: Any
    names: set[str]


_UNREADABLE = _ParsedFile(None, None, set())


def _add_known(pool: Any, file: Any, added: set[str]) -> None:
    """A well-known file (Google's, Confluent's) into ``pool`` after its own imports."""
    for dep in file.dependencies:
        if dep.name not in added:
            _add_known(pool, dep, added)
    added.add(file.name)
    pool.AddSerializedFile(file.serialized_pb)


def _all_messages(messages: Any) -> Any:
    for message in messages:
        yield message
        yield from _all_messages(message.nested_types)


def _message_at(file: Any, indexes: list[int]) -> Any:
    """The message at ``indexes`` (top-level index, then nested ones) in ``file``, or None."""
    try:
        found = list(file.message_types_by_name.values())[indexes[0]]
        for i in indexes[1:]:
            found = found.nested_types[i]
    except IndexError:
        return None
    return found


def reference_subject_name_strategy(ctx: SerializationContext | None, dependency: FileDescriptor) -> str:
    """An imported file's subject: its name (``common/address.proto``)."""
    return str(dependency.name)


def _schema_to_str(file_descriptor: FileDescriptor) -> str:
    """The schema text the registry is given: the file's FileDescriptorProto, base64."""
    return base64.standard_b64encode(file_descriptor.serialized_pb).decode("ascii")


def _create_index_array(msg_desc: Descriptor) -> list[int]:
    """The message's path in its file: the top-level message's index, then each nested index."""
    path: list[int] = []
    current = msg_desc
    while current.containing_type is not None:
        parent = current.containing_type
        path.append(list(parent.nested_types).index(current))
        current = parent
    top = list(current.file.message_types_by_name.values())
    if current not in top:
        raise ValueError(f"message {msg_desc.full_name} not found in {current.file.name}")
    path.append(top.index(current))
    path.reverse()
    return path


class ProtobufSerializer(BaseSerializer):
    """Messages of ``msg_type`` to framed Protobuf."""

    _schema_type = PROTOBUF_TYPE
    _schema_format = "serialized"
    _encode_varints = staticmethod(SchemaId._encode_varints)

    def __init__(
        self,
        msg_type: type[Message],
        schema_registry_client: SchemaRegistryClient,
        conf: dict[str, Any] | None = None,
        rule_conf: dict[str, Any] | None = None,
        rule_registry: Any = None,
    ) -> None:
        self._registry = schema_registry_client
        conf = dict(conf or {})
        self._skip_known_types = _bool(conf, "skip.known.types", True)
        if _bool(conf, "use.deprecated.format", False):
            raise ValueError("use.deprecated.format=True (framing without message indexes) is not supported")
        self._ref_subject = _callable(conf, "reference.subject.name.strategy", reference_subject_name_strategy)
        self._serializer_conf(conf)
        self._rules_conf(rule_conf, rule_registry)
        descriptor = getattr(msg_type, "DESCRIPTOR", None)
        if not isinstance(descriptor, Descriptor):
            raise ValueError("msg_type must be a generated Protobuf message class")
        self._msg_class = msg_type
        self._index_array = _create_index_array(descriptor)
        self._schema_name = descriptor.full_name
        self._file = descriptor.file
        self._lock = threading.Lock()
        self._schemas: dict[str, Schema] = {}  # subject -> the schema with its references registered
        self._registered = _RegisteredMessages(schema_registry_client)

    def _imports_registered(self, ctx: SerializationContext | None, file: FileDescriptor) -> list[SchemaReference]:
        """References to what ``file`` imports, in import order; each imported file is registered
        (or looked up) under its reference subject after its own imports, so the registry knows
        every schema a reference names before it sees the reference."""
        wanted = [dep for dep in file.dependencies if not (self._skip_known_types and _is_builtin(dep.name))]
        return [self._registered_as_reference(ctx, dep) for dep in wanted]

    def _registered_as_reference(self, ctx: SerializationContext | None, dep: FileDescriptor) -> SchemaReference:
        schema = Schema(_schema_to_str(dep), "PROTOBUF", self._imports_registered(ctx, dep))
        subject = self._ref_subject(ctx, dep)
        if self._auto_register:
            self._registry.register_schema(subject, schema, self._normalize_schemas)
        version = self._registry.lookup_schema(subject, schema, self._normalize_schemas).version
        return SchemaReference(dep.name, subject, version)

    def _own_schema(self, subject: str, ctx: SerializationContext | None) -> Schema | None:
        if self._use_schema_id is not None or self._use_latest_version or self._use_latest_with_metadata is not None:
            return None  # the registry's schema is written with; nothing of ours is registered
        with self._lock:
            schema = self._schemas.get(subject)
        if schema is None:
            schema = Schema(_schema_to_str(self._file), "PROTOBUF", self._imports_registered(ctx, self._file))
            with self._lock:
                self._schemas[subject] = schema
        return schema

    def _inline_violations(self, executor: Any, schema: Any, value: Any, fail_fast: bool) -> Any:
        return validate_message(executor, schema, value, fail_fast)

    def _walk(self, schema: Schema, message: Any) -> Callable[[Any, Any, Any], Any]:
        return _walk(self._registered.find(schema, self._schema_name, self._index_array), message)

    def _call(self, obj: Any, ctx: SerializationContext | None) -> bytes | None:
        if obj is None:
            return None
        if not isinstance(obj, self._msg_class):
            raise SerializationError(
                f"this serializer writes {self._msg_class.__name__} messages, not {type(obj).__name__}"
            )
        subject = self._subject(ctx, self._schema_name)
        if subject is None:
            raise SerializationError("the subject name strategy gave no subject")
        schema_id, schema = self._writer(subject, self._own_schema(subject, ctx))
        schema_id.message_indexes = self._index_array
        rules = schema is not None and schema.rule_set is not None

        self._check_inline_rules(ValidationRulesExecution.BEFORE_DOMAIN_RULES, rules, obj.DESCRIPTOR, obj)
        if rules:
            obj = self._rules.run(
                ctx, subject, RulePhase.DOMAIN, RuleMode.WRITE, None, schema, obj, None, self._walk(schema, obj)
            )
            self._check_inline_rules(ValidationRulesExecution.AFTER_DOMAIN_RULES, rules, obj.DESCRIPTOR, obj)
        try:
            body = obj.SerializeToString()
        except Exception as e:  # protobuf raises EncodeError or its own types for unset required fields
            raise SerializationError(f"Protobuf encoding failed{where(ctx)}: {e}") from e
        if rules:
            body = self._rules.run(ctx, subject, RulePhase.ENCODING, RuleMode.WRITE, None, schema, body, None, None)
        return self._frame(body, ctx, schema_id)


class ProtobufDeserializer(BaseDeserializer):
    """Framed Protobuf to ``message_type`` messages. The registry is needed only for the writer
    schema's rules (field and payload encryption, conditions) and ``use.latest.version`` /
    ``use.latest.with.metadata`` (the subject's reader schema: a record written with another
    version goes through the migration rules between the two); without it none run."""

    _schema_type = PROTOBUF_TYPE
    _schema_format = "serialized"

    def __init__(
        self,
        message_type: type[Message],
        conf: dict[str, Any] | None = None,
        schema_registry_client: SchemaRegistryClient | None = None,
        rule_conf: dict[str, Any] | None = None,
        rule_registry: Any = None,
    ) -> None:
        self._registry = schema_registry_client  # type: ignore[assignment]  # None: read without rules
        conf = dict(conf or {})
        if _bool(conf, "use.deprecated.format", False):
            raise ValueError("use.deprecated.format=True (framing without message indexes) is not supported")
        self._deserializer_conf(conf)
        self._rules_conf(rule_conf, rule_registry)
        descriptor = getattr(message_type, "DESCRIPTOR", None)
        if not isinstance(descriptor, Descriptor):
            raise ValueError("message_type must be a generated Protobuf message class")
        self._msg_class = message_type
        self._schema_name = descriptor.full_name
        self._registered = _RegisteredMessages(schema_registry_client)

    def _call(self, data: bytes | None, ctx: SerializationContext | None) -> Any:
        if data is None:
            return None
        uses_latest = self._use_latest_version or self._use_latest_with_metadata is not None
        # As confluent-kafka asks: the strategy without a record name, the reader schema under that
        # subject, then the writer's schema as registered there (then the subject with the
        # writer's message name, when the first gave none).
        asks = ctx is not None and self._registry is not None
        subject = self._subject(ctx, None) if asks else None
        latest = self._latest(subject) if uses_latest and subject is not None else None
        schema_id, payload = self._unframe(data, ctx)
        body = payload.read()
        indexes = schema_id.message_indexes
        writer = None
        if self._registry is not None and (schema_id.id is not None or schema_id.guid is not None):
            writer = self._writer_schema(schema_id, ctx, subject)
        writer_desc = None
        if writer is not None and (writer.rule_set is not None or latest is not None or (asks and subject is None)):
            # the payload's message in the writer's schema, else the one of our type's name
            writer_desc = self._registered.find(writer, None, indexes) or self._registered.find(
                writer, self._schema_name
            )
        if asks and subject is None:
            subject = self._subject(ctx, str(writer_desc.full_name) if writer_desc is not None else self._schema_name)
            latest = self._latest(subject) if uses_latest and subject is not None else None
        if asks:
            self._note_asked(ctx)
        if writer is not None and writer.rule_set is not None:
            body = self._rules.run(
                ctx, subject, RulePhase.ENCODING, RuleMode.READ, None, writer, body, None, None, data
            )
        reader, reader_desc = writer, writer_desc
        steps: list[Any] = []
        if latest is not None and writer is not None and subject is not None:
            steps = self._rules.migrations(self._registry, subject, writer, latest)
            reader = latest.schema
            reader_desc = self._registered.reader(reader, writer_desc)
        if steps and writer_desc is not None and reader_desc is not None:
            message = self._migrated(ctx, subject, steps, writer_desc, reader_desc, body)
        else:
            try:
                message = self._msg_class.FromString(body)
            except DecodeError as e:
                raise SerializationError(f"Protobuf decoding failed{where(ctx)}: {e}") from e
        if reader is not None and reader.rule_set is not None:
            message = self._rules.run(
                ctx,
                subject,
                RulePhase.DOMAIN,
                RuleMode.READ,
                None,
                reader,
                message,
                None,
                _walk(reader_desc, message),
                data,
            )
        return message

    def _migrated(
        self, ctx: SerializationContext | None, subject: Any, steps: list[Any], writer: Any, reader: Any, body: bytes
    ) -> Any:
        """The payload read as the writer's message, migrated as its JSON mapping (unset fields
        with their defaults: what confluent-kafka hands its migration rules), and
        parsed into the reader schema's message: a message of the registered reader schema's own
        type, as on confluent-kafka, not of ``message_type``."""
        source = message_factory.GetMessageClass(writer)()
        try:
            source.ParseFromString(body)
        except DecodeError as e:
            raise SerializationError(f"Protobuf decoding failed{where(ctx)}: {e}") from e
        migrated = self._rules.migrate(ctx, subject, steps, json_format.MessageToDict(source, True))
        return json_format.ParseDict(migrated, message_factory.GetMessageClass(reader)())


def _walk(descriptor: Any, message: Any) -> Callable[[Any, Any, Any], Any]:
    """The field walk in the shape the rule runner calls it, naming fields as ``descriptor`` (the
    registered schema's message) does, or as the message's own type when the schema has none."""
    descriptor = descriptor or message.DESCRIPTOR

    def walk(ctx: Any, field_transform: Any, record: Any) -> Any:
        return transform(ctx, descriptor, record, field_transform)

    return walk


# BigInteger's widest value, in decimal digits: BigDecimal.setScale refuses a wider result.
MAX_BIGINTEGER_DIGITS = 646456993


def decimal_to_protobuf(value: decimal.Decimal, scale: int) -> Any:
    """``value`` at ``scale`` decimal places as confluent.type.Decimal, exactly as BigDecimal.setScale
    without rounding: ValueError when narrowing would drop a non-zero digit or widening overflow."""
    sign, digits, exponent = value.as_tuple()
    if not isinstance(exponent, int):
        raise ValueError(f"cannot convert non-finite Decimal '{value}' to {DECIMAL_TYPE_NAME}")
    unscaled = 0
    for digit in digits:
        unscaled = unscaled * 10 + digit
    delta = exponent + scale
    if delta >= 0:
        if delta + len(digits) > MAX_BIGINTEGER_DIGITS:
            raise ValueError("Scale provided is too wide for the decimal")
        unscaled *= 10**delta
    elif unscaled:
        zeros = len(digits) - len("".join(map(str, digits)).rstrip("0"))
        if -delta > zeros:
            raise ValueError("Scale provided does not match the decimal")
        unscaled //= 10**-delta
    precision = 1 if unscaled == 0 else len(digits) + delta  # counted, never str(): no 4300-digit limit
    return decimal_pb2.Decimal(
        value=unscaled_to_bytes(-unscaled if sign else unscaled), precision=precision, scale=scale
    )


def protobuf_to_decimal(value: Any) -> decimal.Decimal:
    """The exact value of a confluent.type.Decimal (its precision is the digit count every client
    writes, so it is not applied)."""
    return from_proto_decimal(value)


def variant_to_protobuf(value: Variant) -> Any:
    """A Variant as a ``confluent.type.Variant`` message: its own value's bytes, not the buffer of the
    value it was navigated out of."""
    return variant_pb2.Variant(metadata=value.metadata, value=value.standalone_value_bytes())


def protobuf_to_variant(value: Any) -> Variant:
    """A ``confluent.type.Variant`` message's value, read in place."""
    return Variant(value.value, value.metadata)


@dataclass(eq=False, repr=False)
class ProtobufSerializerBuilder(RegistrySerdeBuilder, SerializerBuilder):
    """ProtobufSerializer's arguments, the serde made when a client is (``key.serializer.builder`` or
    ``value.serializer.builder``); see the module `serde_builder`."""

    _init_field = "serializer_init"
    _serde_type = ProtobufSerializer
    schema_registry_config: dict[str, Any] | None = None
    schema_registry_client: SchemaRegistryClient | None = None
    message_type: type[Message] | None = None
    serializer_config: dict[str, Any] | None = None
    rule_config: dict[str, Any] | None = None
    rule_registry: RuleRegistry | None = None
    serializer_init: Callable[[ProtobufSerializer], None] | None = None

    def _check(self) -> None:
        if self.message_type is None:
            # same text as confluent-kafka
            raise ValueError("Protobuf serializer requires a message type; call set_message_type()")


@dataclass(eq=False, repr=False)
class ProtobufDeserializerBuilder(RegistrySerdeBuilder, DeserializerBuilder):
    """ProtobufDeserializer's arguments, the serde made when a client is (``key.deserializer.builder`` or
    ``value.deserializer.builder``); see the module `serde_builder`."""

    _init_field = "deserializer_init"
    _serde_type = ProtobufDeserializer
    schema_registry_config: dict[str, Any] | None = None
    schema_registry_client: SchemaRegistryClient | None = None
    message_type: type[Message] | None = None
    deserializer_config: dict[str, Any] | None = None
    rule_config: dict[str, Any] | None = None
    rule_registry: RuleRegistry | None = None
    deserializer_init: Callable[[ProtobufDeserializer], None] | None = None

    def _check(self) -> None:
        if self.message_type is None:
            # same text as confluent-kafka
            raise ValueError("Protobuf deserializer requires a message type; call set_message_type()")
