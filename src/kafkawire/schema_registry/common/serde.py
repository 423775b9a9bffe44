"""The Confluent wire framing of a serialized payload, and subject names.

Framing: magic byte 0 + the schema id (4 bytes, big-endian), or magic byte 1 + the schema's
16-byte guid; Protobuf payloads then carry the message-index array (varints: the count, then each
index; the common [0] as the single byte 0). The id goes in front of the payload
(``prefix_schema_id_serializer``, the default) or, as a guid, into a record header
(``header_schema_id_serializer``); ``dual_schema_id_deserializer`` reads either.
"""

from __future__ import annotations

import contextvars
import io
import struct
import uuid
from enum import Enum
from typing import Any

from ..._lazy_names import lazy_names
from ...serialization import MessageField, SerializationContext, SerializationError
from ..wildcard_matcher import wildcard_match as wildcard_match
from .schemas import RegisteredSchema as RegisteredSchema
from .schemas import Rule as Rule
from .schemas import RuleKind as RuleKind
from .schemas import RuleMode as RuleMode
from .schemas import Schema as Schema
from .schemas import SchemaReference

__all__ = [
    "DLQ_HEADER_PREFIX",
    "DLQ_RULE_EXCEPTION_HEADER",
    "DLQ_RULE_MODE_HEADER",
    "DLQ_RULE_NAME_HEADER",
    "DLQ_RULE_SUBJECT_HEADER",
    "DLQ_RULE_TOPIC_HEADER",
    "KEY_SCHEMA_ID_HEADER",
    "MAGIC_BYTE_V0",
    "MAGIC_BYTE_V1",
    "VALUE_SCHEMA_ID_HEADER",
    "RuleConditionError",
    "RuleError",
    "SchemaId",
    "SubjectNameStrategyType",
    "clear_original_key",
    "dual_schema_id_deserializer",
    "get_original_key",
    "header_schema_id_serializer",
    "prefix_schema_id_deserializer",
    "prefix_schema_id_serializer",
    "record_subject_name_strategy",
    "set_original_key",
    "topic_record_subject_name_strategy",
    "topic_subject_name_strategy",
]

MAGIC_BYTE_V0 = 0
MAGIC_BYTE_V1 = 1
KEY_SCHEMA_ID_HEADER = "__key_schema_id"
VALUE_SCHEMA_ID_HEADER = "__value_schema_id"
_ID = struct.Struct(">I")

# The headers a dead-letter-queue record carries: which rule failed, in which mode, for which
# subject and topic, and why. A record read back with ``__rule.name`` skips that rule.
DLQ_HEADER_PREFIX = "__rule."
DLQ_RULE_NAME_HEADER = DLQ_HEADER_PREFIX + "name"
DLQ_RULE_MODE_HEADER = DLQ_HEADER_PREFIX + "mode"
DLQ_RULE_SUBJECT_HEADER = DLQ_HEADER_PREFIX + "subject"
DLQ_RULE_TOPIC_HEADER = DLQ_HEADER_PREFIX + "topic"
DLQ_RULE_EXCEPTION_HEADER = DLQ_HEADER_PREFIX + "exception"

# The record's key as its key serde last saw it in this thread (or task), for the value serde's
# rule actions (the DLQ writes it): a key serde sets it after each call, a value serde clears it.
ORIGINAL_KEY: contextvars.ContextVar[Any] = contextvars.ContextVar("kafkawire_original_key", default=None)


def set_original_key(key: Any) -> None:
    ORIGINAL_KEY.set(key)


def get_original_key() -> Any:
    return ORIGINAL_KEY.get()


def clear_original_key() -> None:
    ORIGINAL_KEY.set(None)


class RuleError(Exception):
    """A data-contract rule could not run."""


class RuleConditionError(RuleError):
    """A data-contract condition rule failed for a message; ``rule`` is the rule that said no."""

    def __init__(self, rule: Any) -> None:
        self.rule = rule
        super().__init__(_verdict_text(rule))


def _verdict_text(rule: Any) -> str:
    """The rule's own ``doc`` when its author wrote one; else what it tested, else its name (the
    texts confluent-kafka gives: a DLQ record's ``__rule.exception`` header carries it)."""
    doc, expr = getattr(rule, "doc", None), getattr(rule, "expr", None)
    if doc:
        return str(doc)
    return f"Rule expr failed: {expr}" if expr else f"Rule failed: {getattr(rule, 'name', rule)}"


class SubjectNameStrategyType(str, Enum):
    """``subject.name.strategy.type``: how a serde names its subject. ASSOCIATED asks the registry
    which subject the topic is associated with; NONE is only a fallback (no subject: an error)."""

    NONE = "NONE"
    TOPIC = "TOPIC"
    RECORD = "RECORD"
    TOPIC_RECORD = "TOPIC_RECORD"
    ASSOCIATED = "ASSOCIATED"


def _write_varint(buf: io.BytesIO, value: int, zigzag: bool) -> None:
    if zigzag:
        value = (value << 1) ^ (value >> 63)
    value &= (1 << 64) - 1
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    buf.write(out)


def _read_varint(buf: io.BytesIO, zigzag: bool) -> int:
    shift = 0
    result = 0
    while True:
        b = buf.read(1)
        if not b:
            raise EOFError("the message-index array ends early")
        result |= (b[0] & 0x7F) << shift
        if not b[0] & 0x80:
            break
        shift += 7
        if shift > 63:
            raise SerializationError("Malformed varint in message indexes")
    if zigzag:
        result = (result >> 1) ^ -(result & 1)
    return result


class SchemaId:
    """The schema a payload was written with: an id or a guid, and Protobuf's message indexes."""

    def __init__(
        self,
        schema_type: str,
        id: int | None = None,
        guid: uuid.UUID | str | None = None,
        message_indexes: list[int] | None = None,
    ) -> None:
        self.schema_type = schema_type
        self.id = id
        self.guid = uuid.UUID(guid) if isinstance(guid, str) else guid
        self.message_indexes = message_indexes

    def __repr__(self) -> str:
        return f"SchemaId(schema_type={self.schema_type!r}, id={self.id}, guid={self.guid}, message_indexes={self.message_indexes})"

    def from_bytes(self, payload: io.BytesIO) -> io.BytesIO:
        """Reads the framing from ``payload``; returns it positioned at the serialized body."""
        magic = payload.read(1)
        if magic == bytes([MAGIC_BYTE_V0]):
            raw = payload.read(4)
            if len(raw) != 4:
                raise SerializationError("Invalid payload: truncated schema id")
            self.id = _ID.unpack(raw)[0]
        elif magic == bytes([MAGIC_BYTE_V1]):
            raw = payload.read(16)
            if len(raw) != 16:
                raise SerializationError("Invalid payload: truncated schema guid")
            self.guid = uuid.UUID(bytes=raw)
        else:
            raise SerializationError(
                f"unknown magic byte {magic[0] if magic else None}: the payload is not framed by a "
                "Schema Registry serializer"
            )
        if self.schema_type == "PROTOBUF":
            try:
                self.message_indexes = self._read_index_array(payload, zigzag=True)
            except EOFError as e:
                raise SerializationError(f"Invalid payload: {e}") from None
        return payload

    def id_to_bytes(self) -> bytes:
        if self.id is None:
            raise SerializationError("no schema id to write: SchemaId.id is None")
        buf = io.BytesIO()
        buf.write(bytes([MAGIC_BYTE_V0]))
        buf.write(_ID.pack(self.id))
        self._write_indexes(buf)
        return buf.getvalue()

    def guid_to_bytes(self) -> bytes:
        if self.guid is None:
            raise SerializationError("no schema guid to write: SchemaId.guid is None")
        buf = io.BytesIO()
        buf.write(bytes([MAGIC_BYTE_V1]))
        buf.write(self.guid.bytes)
        self._write_indexes(buf)
        return buf.getvalue()

    def _write_indexes(self, buf: io.BytesIO) -> None:
        if self.message_indexes is not None:
            self._encode_varints(buf, self.message_indexes, zigzag=True)

    @staticmethod
    def _encode_varints(buf: io.BytesIO, ints: list[int], zigzag: bool = True) -> None:
        """The message-index array: its length then each index; [0] (the first message) as one 0."""
        if ints == [0]:
            buf.write(b"\x00")
            return
        _write_varint(buf, len(ints), zigzag)
        for value in ints:
            _write_varint(buf, value, zigzag)

    @staticmethod
    def _read_index_array(buf: io.BytesIO, zigzag: bool = True) -> list[int]:
        size = _read_varint(buf, zigzag)
        if size < 0 or size > 100_000:
            raise SerializationError(f"Invalid message index count {size}")
        if size == 0:
            return [0]
        return [_read_varint(buf, zigzag) for _ in range(size)]


def prefix_schema_id_serializer(payload: bytes, ctx: SerializationContext | None, schema_id: SchemaId) -> bytes:
    """Magic byte 0 and the id in front of the payload (the classic framing)."""
    return schema_id.id_to_bytes() + payload


def header_schema_id_serializer(payload: bytes, ctx: SerializationContext | None, schema_id: SchemaId) -> bytes:
    """The guid framing in the ``__key_schema_id``/``__value_schema_id`` header; the payload bare.
    A dict of headers keeps one value per name; a list gets one more pair (readers take the last)."""
    if ctx is None:
        # same text as confluent-kafka: its tests match on "SerializationContext is required"
        raise SerializationError("SerializationContext is required for header_schema_id_serializer")
    headers = ctx.headers
    if not isinstance(headers, (dict, list)):
        if headers is None:
            raise SerializationError("the record has no headers to carry the schema id (pass headers=[] or {})")
        raise SerializationError(f"headers must be a list or dict to carry the schema id, not {type(headers).__name__}")
    name, framing = _id_header(ctx), schema_id.guid_to_bytes()
    if isinstance(headers, dict):
        headers[name] = framing
    else:
        headers.append((name, framing))
    return payload


def _id_header(ctx: SerializationContext) -> str:
    return KEY_SCHEMA_ID_HEADER if ctx.field == MessageField.KEY else VALUE_SCHEMA_ID_HEADER


def _header(headers: Any, name: str) -> bytes | None:
    if isinstance(headers, dict):
        value = headers.get(name)
        return value if isinstance(value, bytes) else None
    found = None
    for key, value in headers or ():
        if key == name:
            found = value  # the last one wins, as for Kafka's lastHeader
    return found if isinstance(found, bytes) else None


def dual_schema_id_deserializer(payload: bytes, ctx: SerializationContext | None, schema_id: SchemaId) -> io.BytesIO:
    """The schema id from the record's header when it has one, else from the payload's prefix."""
    if ctx is not None and ctx.headers:
        header = _header(ctx.headers, _id_header(ctx))
        if header is not None:
            schema_id.from_bytes(io.BytesIO(header))
            return io.BytesIO(payload)
    return schema_id.from_bytes(io.BytesIO(payload))


def prefix_schema_id_deserializer(payload: bytes, ctx: SerializationContext | None, schema_id: SchemaId) -> io.BytesIO:
    return schema_id.from_bytes(io.BytesIO(payload))


def topic_subject_name_strategy(ctx: SerializationContext | None, record_name: str | None) -> str | None:
    """``<topic>-key`` or ``<topic>-value`` (the default)."""
    if ctx is None:
        return None
    field = ctx.field
    return ctx.topic + "-" + (field.value if isinstance(field, Enum) else str(field))


def topic_record_subject_name_strategy(ctx: SerializationContext | None, record_name: str | None) -> str | None:
    """``<topic>-<fully qualified record name>``."""
    if ctx is None or record_name is None:
        return None
    return f"{ctx.topic}-{record_name}"


def record_subject_name_strategy(ctx: SerializationContext | None, record_name: str | None) -> str | None:
    """The fully qualified record name."""
    return record_name


def reference_subject_name_strategy(ctx: SerializationContext | None, schema_ref: SchemaReference | None) -> str | None:
    """A referenced schema's subject: the reference's own name (the context is not needed)."""
    return schema_ref.name if schema_ref is not None else None


# Names confluent-kafka's module of this name gives: kafkawire's are in common.rules, _sync/
# (rule_runner, associated_name_strategy), common.validation_rules/_options and
# common.parsed_schema_cache, most of which import this module, so they are looked up on first use.
__getattr__, __dir__ = lazy_names(
    __name__,
    globals(),
    {
        "kafkawire.schema_registry.common.rules": (
            "ErrorAction FieldContext FieldRuleExecutor FieldTransform FieldTransformer FieldType NoneAction "
            "RuleAction RuleBase RuleContext RuleExecutor"
        ),
        "kafkawire.schema_registry._sync.rule_runner": "Migration",
        "kafkawire.schema_registry._sync.associated_name_strategy": "STRATEGY_TYPE_MAP",
        "kafkawire.schema_registry.common.validation_rules": (
            "VALIDATION_RULES_PROP ValidationRule ValidationRuleError ValidationRuleExecutor ValidationRulesExecution "
            "evaluate_validation_rule parse_validation_rules"
        ),
        "kafkawire.schema_registry.common.validation_options": "default_validation_rule_executor",
        "kafkawire.schema_registry.common.parsed_schema_cache": "ParsedSchemaCache",
    },
)
