"""The DLQ rule action, differential: a CEL condition with ``onFailure: DLQ`` on confluent-kafka's
Avro serdes and on kafkawire's, each with its own DlqAction and registry front (confluent's registry
logic, the same schema and rule set), on Tansu: the calls' outcomes and the dead letter records
(key, value, headers) compared, on write, on read, and a DLQ record written back (its rule skipped)."""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

import pytest

pytest.importorskip("celpy")

import confluent_kafka.schema_registry as their_sr
import confluent_kafka.schema_registry.avro as their_avro
import confluent_kafka.schema_registry.rule_registry as their_rules
import confluent_kafka.schema_registry.rules.cel.cel_executor as their_cel
import confluent_kafka.schema_registry.rules.dlq.dlq_action as their_dlq
import confluent_kafka.serialization as their_ser

import kafkawire.schema_registry as our_sr
import kafkawire.schema_registry.avro as our_avro
import kafkawire.schema_registry.rule_registry as our_rules
import kafkawire.schema_registry.rules.cel.cel_executor as our_cel
import kafkawire.schema_registry.rules.dlq.dlq_action as our_dlq
import kafkawire.serialization as our_ser
from kafkawire.local_broker import TansuBroker
from tests.harness.judge import consume_all
from tests.harness.topics import create_topic
from tests.serde.registry_front import registry_front

SIDES = {
    "confluent-kafka": types.SimpleNamespace(
        sr=their_sr, avro=their_avro, rules=their_rules, cel=their_cel, dlq=their_dlq, ser=their_ser
    ),
    "kafkawire": types.SimpleNamespace(
        sr=our_sr, avro=our_avro, rules=our_rules, cel=our_cel, dlq=our_dlq, ser=our_ser
    ),
}
VALUE = '{"type":"record","name":"V","fields":[{"name":"n","type":"int"},{"name":"s","type":"string"}]}'


def _outcome(call: Callable[[], Any]) -> Any:
    try:
        return ("ok", call())
    except Exception as e:
        return ("error", type(e).__name__, str(e), type(e.__cause__).__name__)


def _steps(lib: types.SimpleNamespace, url: str, bootstrap: str, topic: str, dlq_topic: str) -> list[Any]:
    registry = lib.sr.SchemaRegistryClient({"url": url})
    rules = lib.rules.RuleRegistry()
    rules.register_executor(lib.cel.CelExecutor())
    action = lib.dlq.DlqAction({"bootstrap.servers": bootstrap, "dlq.auto.flush": True})
    rules.register_action(action)
    conf = {"auto.register.schemas": False, "use.latest.version": True}
    key_ser = lib.avro.AvroSerializer(registry, '"string"')
    value_ser = lib.avro.AvroSerializer(
        registry, None, conf=conf, rule_registry=rules, rule_conf={"dlq.topic": dlq_topic}
    )
    key_de = lib.avro.AvroDeserializer(registry)
    value_de = lib.avro.AvroDeserializer(registry, conf={"use.latest.version": True}, rule_registry=rules)
    mf, ctx = lib.ser.MessageField, lib.ser.SerializationContext
    headers = [("h", b"v")]
    replay = [("__rule.name", b"positive")]
    out = [
        _outcome(lambda: key_ser("k1", ctx(topic, mf.KEY))),
        _outcome(lambda: value_ser({"n": 1, "s": "fine"}, ctx(topic, mf.VALUE, headers))),
        _outcome(lambda: key_ser("k2", ctx(topic, mf.KEY))),
        _outcome(lambda: value_ser({"n": -1, "s": "bad"}, ctx(topic, mf.VALUE, headers))),
        _outcome(lambda: value_ser({"n": -2, "s": "no key"}, ctx(topic, mf.VALUE))),  # the key was cleared
        _outcome(lambda: value_ser({"n": -3, "s": "replayed"}, ctx(topic, mf.VALUE, replay))),
    ]
    written = out[-1][1]
    out += [
        _outcome(lambda: key_de(out[0][1], ctx(topic, mf.KEY))),
        _outcome(lambda: value_de(written, ctx(topic, mf.VALUE, headers))),  # read: the rule fails again
        _outcome(lambda: value_de(written, ctx(topic, mf.VALUE, replay))),
    ]
    action.close()
    return out


@pytest.mark.broker
def test_dlq_action_as_confluents(tansu: TansuBroker, topic_name: Callable[[str], str]) -> None:
    rule = {
        "name": "positive",
        "kind": "CONDITION",
        "mode": "WRITEREAD",
        "type": "CEL",
        "expr": "message.n > 0",
        "onFailure": "DLQ",
    }
    seen, dead = {}, {}
    for side, lib in SIDES.items():
        topic, dlq_topic = topic_name(f"in-{side}"), topic_name(f"dlq-{side}")
        create_topic(tansu.bootstrap, dlq_topic, 1)  # one partition: the dead letters in the order sent
        with registry_front() as front:
            schema = their_sr.Schema.from_dict({"schema": VALUE, "ruleSet": {"domainRules": [rule]}})
            front.registry.register_schema(f"{topic}-value", schema)
            seen[side] = _steps(lib, front.url, tansu.bootstrap, topic, dlq_topic)
        records = consume_all(tansu.bootstrap, dlq_topic, 3, timeout=30)
        dead[side] = [
            (m.key(), m.value(), [(k, v.replace(topic.encode(), b"<topic>")) for k, v in m.headers() or []])
            for m in records
        ]
    assert seen["kafkawire"] == seen["confluent-kafka"]
    assert dead["kafkawire"] == dead["confluent-kafka"]
    outcomes = seen["kafkawire"]
    assert outcomes[3] == ("error", "SerializationError", "Rule failed: positive", "RuleConditionError")
    assert outcomes[5][0] == "ok" and outcomes[8][0] == "ok" and outcomes[7][0] == "error"
    assert [d[0] for d in dead["kafkawire"]] == [b"k2", None, outcomes[0][1]]
    assert dead["kafkawire"][0][1] == b'{"n": -1, "s": "bad"}' and dead["kafkawire"][2][1] == outcomes[5][1]
