"""Data-contract rules kafkawire does not run fail the record instead of being skipped: a CEL
condition or a field encryption is never silently bypassed. The rules are set through
confluent-kafka's own registry logic (registry_front.py)."""

from __future__ import annotations

import json

import pytest
from confluent_kafka.schema_registry import Rule, RuleKind, RuleMode, RuleSet
from confluent_kafka.schema_registry import Schema as TheirSchema
from confluent_kafka.schema_registry.avro import AvroSerializer as TheirSerializer
from confluent_kafka.serialization import MessageField as TheirField
from confluent_kafka.serialization import SerializationContext as TheirContext

from kafkawire.schema_registry import SchemaRegistryClient
from kafkawire.schema_registry.avro import AvroDeserializer, AvroSerializer
from kafkawire.serialization import MessageField, SerializationContext, SerializationError
from tests.serde.registry_front import RegistryFront

SCHEMA = json.dumps({"type": "record", "name": "P", "fields": [{"name": "ssn", "type": "string"}]})
CTX = SerializationContext("people", MessageField.VALUE)


def _rule(kind: RuleKind, mode: RuleMode, rule_type: str, disabled: bool = False) -> Rule:
    return Rule("r1", None, kind, mode, rule_type, ["PII"], None, "message.ssn != ''", None, None, disabled)


def _register(front: RegistryFront, rules: RuleSet) -> None:
    front.registry.register_schema("people-value", TheirSchema(SCHEMA, "AVRO", [], None, rules))


def test_write_rules_fail_the_record(front: RegistryFront) -> None:
    _register(front, RuleSet(None, [_rule(RuleKind.CONDITION, RuleMode.WRITE, "CEL")]))
    ser = AvroSerializer(
        SchemaRegistryClient({"url": front.url}), None, conf={"auto.register.schemas": False, "use.latest.version": True}
    )
    with pytest.raises(SerializationError, match="CEL"):
        ser({"ssn": "1"}, CTX)


def test_encryption_on_read_is_not_returned_as_ciphertext(front: RegistryFront) -> None:
    plain = TheirSerializer(front.registry, SCHEMA)({"ssn": "1"}, TheirContext("people", TheirField.VALUE))
    schema_id = int.from_bytes(plain[1:5], "big")
    # The same subject's schema, now with an encryption rule, under a new id: a payload naming it.
    _register(front, RuleSet(None, None, [_rule(RuleKind.TRANSFORM, RuleMode.WRITEREAD, "ENCRYPT")]))
    enc_id = front.registry.get_latest_version("people-value").schema_id
    assert enc_id != schema_id
    payload = b"\x00" + enc_id.to_bytes(4, "big") + plain[5:]
    with pytest.raises(SerializationError, match="ENCRYPT"):
        AvroDeserializer(SchemaRegistryClient({"url": front.url}))(payload, CTX)


def test_disabled_and_read_only_rules_do_not_block_writes(front: RegistryFront) -> None:
    rules = RuleSet(
        None, [_rule(RuleKind.CONDITION, RuleMode.WRITE, "CEL", disabled=True), _rule(RuleKind.CONDITION, RuleMode.READ, "CEL")]
    )
    _register(front, rules)
    ser = AvroSerializer(
        SchemaRegistryClient({"url": front.url}), None, conf={"auto.register.schemas": False, "use.latest.version": True}
    )
    assert ser({"ssn": "1"}, CTX) is not None
