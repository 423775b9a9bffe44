"""``DLQ``: the rule action that sends a record whose rule failed to a dead letter queue topic, then
fails the serde's call as ERROR would (``SerializationError``, caused by the rule's failure).

What is sent: the record's key and value as the serdes got them (on write the objects, made bytes:
bytes as they are, text in UTF-8, an int64 and a float in 8 big-endian bytes, anything else as JSON
after the fields tagged by ``dlq.redact.rule.types``' rules are redacted; on read the bytes read),
the record's headers and the ``__rule.*`` headers naming the rule, mode, subject, topic and error.
A serde reading or writing such a record back skips that rule. Configuration (the action's ``conf``,
or ``dlq.*``/``producer`` in a serde's ``rule_conf``): ``dlq.topic`` (a rule's ``dlq.topic``
parameter when unset), ``dlq.auto.flush``, ``dlq.redact.rule.types`` (``ENCRYPT,ENCRYPT_PAYLOAD``),
``producer`` (one to use); any other key configures the producer made on first use.
"""

from __future__ import annotations

import copy
import json
import logging
import struct
import threading
import uuid
from collections.abc import Callable
from typing import Any

from ....producer import Producer
from ....serialization import SerializationError
from ...common.rules import FieldContext, FieldRuleExecutor, FieldTransform, FieldType, RuleAction, RuleContext
from ...common.schema_registry_client import Rule, RuleKind
from ...common.serde import (
    DLQ_HEADER_PREFIX,
    DLQ_RULE_EXCEPTION_HEADER,
    DLQ_RULE_MODE_HEADER,
    DLQ_RULE_NAME_HEADER,
    DLQ_RULE_SUBJECT_HEADER,
    DLQ_RULE_TOPIC_HEADER,
)
from ...rule_registry import RuleRegistry

__all__ = ["DlqAction", "FieldRedactionExecutor"]

log = logging.getLogger(__name__)

_INT64 = range(-(2**63), 2**63)


class FieldRedactionExecutor(FieldRuleExecutor):
    """Replaces the selected string and bytes fields with ``<REDACTED>`` (what a DLQ record shows of
    the fields encryption rules protect)."""

    TYPE = "REDACT"
    REDACTED_STRING = "<REDACTED>"
    REDACTED_BYTES = REDACTED_STRING.encode("utf-8")

    def type(self) -> str:
        return self.TYPE

    def new_transform(self, ctx: RuleContext) -> FieldTransform:
        def redact(ctx: RuleContext, field_ctx: FieldContext, value: Any) -> Any:
            if value is None:
                return None
            if field_ctx.field_type == FieldType.STRING:
                return self.REDACTED_STRING
            if field_ctx.field_type == FieldType.BYTES:
                return self.REDACTED_BYTES
            return value

        return FieldTransform(redact)

    @classmethod
    def register(cls) -> FieldRedactionExecutor:
        executor = cls()
        RuleRegistry.register_rule_executor(executor)
        return executor


class DlqAction(RuleAction):
    """The ``DLQ`` rule action (see the module)."""

    TYPE = "DLQ"
    DLQ_TOPIC = "dlq.topic"
    DLQ_AUTO_FLUSH = "dlq.auto.flush"
    DLQ_REDACT_RULE_TYPES = "dlq.redact.rule.types"
    DLQ_REDACT_RULE_TYPES_DEFAULT = "ENCRYPT,ENCRYPT_PAYLOAD"
    PRODUCER = "producer"
    HEADER_PREFIX = DLQ_HEADER_PREFIX
    RULE_NAME = DLQ_RULE_NAME_HEADER
    RULE_MODE = DLQ_RULE_MODE_HEADER
    RULE_SUBJECT = DLQ_RULE_SUBJECT_HEADER
    RULE_TOPIC = DLQ_RULE_TOPIC_HEADER
    RULE_EXCEPTION = DLQ_RULE_EXCEPTION_HEADER

    def __init__(self, conf: dict[str, Any] | None = None) -> None:
        self._conf: dict[str, Any] = dict(conf or {})
        self._lock = threading.Lock()
        self._topic: str | None = None
        self._auto_flush = False
        self._redact_rule_types: list[str] = []
        self._producer: Any = None
        self._read_conf()

    def type(self) -> str:
        return self.TYPE

    def configure(self, client_conf: dict[str, Any], rule_conf: dict[str, Any]) -> None:
        with self._lock:
            self._conf.update(
                {k: v for k, v in (rule_conf or {}).items() if k == self.PRODUCER or k.startswith("dlq.")}
            )
            self._read_conf()

    def _read_conf(self) -> None:
        self._topic = self._conf.get(self.DLQ_TOPIC)
        auto_flush = self._conf.get(self.DLQ_AUTO_FLUSH)
        if auto_flush is not None:
            self._auto_flush = str(auto_flush).lower() == "true"
        types = self._conf.get(self.DLQ_REDACT_RULE_TYPES)
        types = self.DLQ_REDACT_RULE_TYPES_DEFAULT if types is None else types
        self._redact_rule_types = [t.strip() for t in str(types).split(",")]
        if self._conf.get(self.PRODUCER) is not None:
            self._producer = self._conf[self.PRODUCER]

    def _get_producer(self) -> Any:
        with self._lock:
            if self._producer is None:
                # every record acknowledged by all replicas, in order, never given up on
                conf: dict[str, Any] = {
                    "enable.idempotence": False,
                    "acks": "all",
                    "max.in.flight.requests.per.connection": 1,
                    "message.timeout.ms": 0,
                }
                conf |= {k: v for k, v in self._conf.items() if k != self.PRODUCER and not k.startswith("dlq.")}
                self._producer = Producer(conf)
            return self._producer

    def run(self, ctx: RuleContext, message: Any, ex: Exception | None) -> None:
        topic = self._topic or ctx.get_parameter(self.DLQ_TOPIC)
        if not topic:
            raise SerializationError("Could not send to DLQ as no topic is configured")
        try:
            producer = self._get_producer()
            producer.produce(
                topic,
                key=self._to_bytes(ctx, ctx.original_key),
                value=self._to_bytes(ctx, ctx.original_value),
                headers=self._headers(ctx, ex),
                on_delivery=_report(topic),
            )
            producer.poll(0)
            if self._auto_flush:
                producer.flush()
        except Exception as e:  # the DLQ is best effort: the record fails either way
            log.error("Could not produce message to DLQ topic %s: %s", topic, e)
        # same text as confluent-kafka: programs match on it
        raise SerializationError(f"Rule failed: {ctx.rule.name}") from ex

    def _to_bytes(self, ctx: RuleContext, value: Any) -> bytes | None:
        if value is None or isinstance(value, bytes):
            return value
        if isinstance(value, (bytearray, memoryview)):
            return bytes(value)
        if isinstance(value, str):
            return value.encode("utf-8")
        if isinstance(value, uuid.UUID):
            return str(value).encode("utf-8")
        if isinstance(value, int) and not isinstance(value, bool) and value in _INT64:
            return struct.pack(">q", value)
        if isinstance(value, float):
            return struct.pack(">d", value)
        value = self._redacted(ctx, value)
        if hasattr(value, "DESCRIPTOR"):
            from google.protobuf import json_format

            return json_format.MessageToJson(value).encode("utf-8")
        return json.dumps(value, default=_json_default).encode("utf-8")

    def _redacted(self, ctx: RuleContext, value: Any) -> Any:
        """A copy of ``value`` with the fields the redacting rules' tags select redacted."""
        rules = [rule for rule in ctx.rules or [] if rule.type in self._redact_rule_types]
        if not rules:
            return value
        try:
            tags = sorted({tag for rule in rules for tag in rule.tags or ()})
            redact = Rule(
                "redact", None, RuleKind.TRANSFORM, ctx.rule_mode, self.TYPE, tags, None, None, None, None, False
            )
            redact_ctx = RuleContext(
                ctx.ser_ctx,
                ctx.source,
                ctx.target,
                ctx.subject,
                ctx.rule_mode,
                redact,
                0,
                [redact],
                ctx.inline_tags,
                ctx.field_transformer,
                ctx.original_key,
                ctx.original_value,
            )
            executor = FieldRedactionExecutor()
            try:
                return executor.transform(redact_ctx, copy.deepcopy(value))
            finally:
                executor.close()
        except Exception as e:
            log.error("Could not redact fields: %s", e)
            return value

    def _headers(self, ctx: RuleContext, ex: Exception | None) -> list[tuple[str, bytes | None]]:
        incoming = ctx.ser_ctx.headers if ctx.ser_ctx is not None else None
        pairs = incoming.items() if isinstance(incoming, dict) else incoming or []
        headers = [(k, _header(v)) for k, v in pairs]
        headers += [
            (self.RULE_NAME, _header(ctx.rule.name)),
            (self.RULE_MODE, _header(ctx.rule_mode.value if ctx.rule_mode else None)),
            (self.RULE_SUBJECT, _header(ctx.subject)),
            (self.RULE_TOPIC, _header(ctx.ser_ctx.topic if ctx.ser_ctx else None)),
        ]
        if ex is not None:
            headers.append((self.RULE_EXCEPTION, _header(str(ex))))
        return headers

    def close(self) -> None:
        with self._lock:
            producer, self._producer = self._producer, None
        if producer is not None:
            producer.flush()

    @classmethod
    def register(cls, conf: dict[str, Any] | None = None) -> DlqAction:
        action = cls(conf)
        RuleRegistry.register_rule_action(action)
        return action


def _report(topic: str) -> Callable[[Any, Any], None]:
    def delivered(err: Any, _msg: Any) -> None:
        if err is not None:
            log.error("Could not produce message to DLQ topic %s: %s", topic, err)
        else:
            log.info("Sent message to DLQ topic %s", topic)

    return delivered


def _json_default(obj: Any) -> str:
    return bytes(obj).decode("latin-1") if isinstance(obj, (bytes, bytearray)) else str(obj)


def _header(value: Any) -> bytes | None:
    if value is None or isinstance(value, bytes):
        return value
    return bytes(value) if isinstance(value, bytearray) else str(value).encode("utf-8")
