"""The legacy Avro API (``confluent_kafka.avro``), differential: the same steps with confluent-kafka's
module and kafkawire.avro, each against its own registry front (confluent's registry logic, fresh,
so the ids it gives are the same), results, errors and the requests each sent compared; records
produced to Tansu compared byte for byte and decoded by both consumers."""

from __future__ import annotations

import base64
import ssl
import types
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import confluent_kafka
import confluent_kafka.avro as theirs
import pytest

import kafkawire
import kafkawire.avro as ours
from kafkawire.local_broker import TansuBroker
from tests.harness.certs import make_ca, make_leaf
from tests.harness.judge import consume_all, judge_config, unique_name
from tests.serde.registry_front import RegistryFront, registry_front

SIDES = {"confluent-kafka": theirs, "kafkawire": ours}
TOPIC_PARTITION = {theirs.__name__: confluent_kafka.TopicPartition, ours.__name__: kafkawire.TopicPartition}

VALUE = '{"type":"record","name":"V","namespace":"legacy","fields":[{"name":"n","type":"int"}]}'
EVOLVED = (
    '{"type":"record","name":"V","namespace":"legacy","fields":[{"name":"n","type":"int"},'
    '{"name":"tag","type":["null","string"],"default":null}]}'
)
NESTED = (
    '{"type":"record","name":"Order","fields":['
    '{"name":"id","type":"long"},'
    '{"name":"state","type":{"type":"enum","name":"State","symbols":["NEW","PAID"]}},'
    '{"name":"lines","type":{"type":"array","items":{"type":"record","name":"Line","fields":['
    '{"name":"sku","type":"string"},{"name":"qty","type":"int"}]}}},'
    '{"name":"attrs","type":{"type":"map","values":"double"}},'
    '{"name":"digest","type":{"type":"fixed","name":"Digest","size":4}},'
    '{"name":"note","type":["null","string"],"default":null},'
    '{"name":"raw","type":"bytes"}]}'
)
ORDER = {
    "id": 7,
    "state": "PAID",
    "lines": [{"sku": "a", "qty": 2}, {"sku": "é", "qty": 1}],
    "attrs": {"w": 1.5},
    "digest": b"\x00\x01\x02\x03",
    "note": None,
    "raw": b"\xff",
}


def _outcome(call: Callable[[], Any]) -> Any:
    """What a call gave, comparable across the two libraries: its value, or its error's class name and text."""
    try:
        return ("ok", _plain(call()))
    except Exception as e:
        return ("error", type(e).__name__, str(e))


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if type(value).__module__.startswith("avro."):
        return ("schema", str(value))
    return value


def _caches(client: Any) -> Any:
    def by_schema(cache: Any) -> Any:
        return {subject: sorted((str(s), v) for s, v in found.items()) for subject, found in sorted(cache.items())}

    return (
        sorted((i, str(s)) for i, s in client.id_to_schema.items()),
        by_schema(client.subject_to_schema_ids),
        by_schema(client.subject_to_schema_versions),
    )


def _client_steps(avro: types.ModuleType, url: str) -> list[Any]:
    client = avro.CachedSchemaRegistryClient({"url": url})
    value, evolved, key = avro.loads(VALUE), avro.loads(EVOLVED), avro.loads('"string"')
    steps = [
        _outcome(lambda: client.register("t-value", value)),
        _outcome(lambda: client.register("t-value", avro.loads(VALUE))),  # an equal schema: cached
        _outcome(lambda: client.register("t-key", key)),
        _outcome(lambda: client.register("t-value", evolved)),
        _outcome(lambda: client.register("t-value", VALUE)),  # JSON text: another cache key
        _outcome(lambda: client.register("t-value", {"type": "int"})),  # a dict: its repr is no schema
        _outcome(lambda: client.check_registration("t-value", value)),
        _outcome(lambda: client.check_registration("nobody", value)),
        _outcome(lambda: client.get_by_id(1)),
        _outcome(lambda: client.get_by_id(99)),
        _outcome(lambda: client.get_latest_schema("t-value")),
        _outcome(lambda: client.get_latest_schema("nobody")),
        _outcome(lambda: client.get_by_version("t-value", 1)),
        _outcome(lambda: client.get_by_version("t-value", 9)),
        _outcome(lambda: client.get_version("t-value", value)),
        _outcome(lambda: client.get_version("t-value", avro.loads('"long"'))),
        _outcome(lambda: client.test_compatibility("t-value", evolved)),
        _outcome(lambda: client.update_compatibility("FULL", "t-value")),
        _outcome(lambda: client.update_compatibility("SOMETIMES")),
        _outcome(lambda: client.get_compatibility()),
        _outcome(lambda: client._send_request(url, method="PATCH")),
        _outcome(lambda: client.delete_subject("t-key")),
        _outcome(lambda: client.delete_subject("t-key")),
        _outcome(lambda: avro.loads('{"type":"record","name":"X"}')),
        _outcome(lambda: avro.loads("not json")),
        _caches(client),
    ]
    fresh = avro.CachedSchemaRegistryClient({"url": url + "/"})
    steps += [
        _outcome(lambda: fresh.check_registration("t-value", avro.loads(EVOLVED))),
        _outcome(lambda: fresh.get_version("t-value", avro.loads(EVOLVED))),
        _outcome(lambda: fresh.get_version("t-value", avro.loads(EVOLVED))),  # cached
        _caches(fresh),
    ]
    client.close()
    with fresh:
        pass
    return steps


def _each_side(steps: Callable[[types.ModuleType, RegistryFront], Any]) -> dict[str, Any]:
    out = {}
    for side, avro in SIDES.items():
        with registry_front() as front, warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            out[side] = (steps(avro, front), front.requests, front.authorizations)
    return out


def test_registry_client_steps_as_confluents() -> None:
    done = _each_side(lambda avro, front: _client_steps(avro, front.url))
    assert done["kafkawire"] == done["confluent-kafka"]
    steps = done["kafkawire"][0]
    assert steps[0] == ("ok", 1) and steps[3] == ("ok", 3)  # the judge registered them: the steps mean something
    assert steps[7][0] == "error" and steps[9] == ("ok", None)


CONFIGS: list[dict[str, Any]] = [
    {},
    {"url": 5},
    {"url": "ftp://registry"},
    {"url": "http://registry", "unknown.key": 1},
    {"url": "http://registry", "basic.auth.credentials.source": "KERBEROS"},
    {"url": "http://registry", "basic.auth.credentials.source": "SASL_INHERIT", "sasl.mechanism": "gssapi"},
    {"url": "http://registry", "basic.auth.user.info": "u:p"},  # the URL source leaves it unread
    {"url": "http://registry", "ssl.certificate.location": "/c.pem"},
    {"url": "http://registry", "ssl.key.location": "/k.pem"},
    {"url": "http://user:pw@registry/", "auto.register.schemas": False},
    {"url": "http://registry", "basic.auth.credentials.source": "user_info", "basic.auth.user.info": "u:p"},
]


@pytest.mark.parametrize("conf", CONFIGS, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()) or "empty")
def test_configuration_as_confluents(conf: dict[str, Any]) -> None:
    seen = {}
    for side, avro in SIDES.items():
        given = dict(conf)
        outcome = _outcome(lambda: avro.CachedSchemaRegistryClient(given))  # noqa: B023
        client = outcome[1] if outcome[0] == "ok" else None
        shown = ("ok", client.url, client.auto_register_schemas) if client is not None else outcome
        seen[side] = (shown, given)  # the configuration is consumed as it is read
    assert seen["kafkawire"] == seen["confluent-kafka"]


def test_the_older_constructor_warns_as_confluents() -> None:
    seen = {}
    for side, avro in SIDES.items():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            client = avro.CachedSchemaRegistryClient("http://registry:8081/", max_schemas_per_subject=5)
        seen[side] = (client.url, [(w.category, str(w.message)) for w in caught])
    assert seen["kafkawire"] == seen["confluent-kafka"]
    assert seen["kafkawire"][1][0][0] is DeprecationWarning


def test_the_constants_are_confluents() -> None:
    from confluent_kafka.avro import cached_schema_registry_client as their_client
    from confluent_kafka.avro.serializer import message_serializer as their_serializer

    from kafkawire.avro import cached_schema_registry_client as our_client
    from kafkawire.avro.serializer import message_serializer as our_serializer

    for name in ("ACCEPT_HDR", "VALID_AUTH_PROVIDERS", "VALID_LEVELS", "VALID_METHODS"):
        assert getattr(our_client, name) == getattr(their_client, name)
    assert (our_serializer.MAGIC_BYTE, our_serializer.HAS_FAST) == (their_serializer.MAGIC_BYTE, True)
    assert repr(ours.ClientError("x", 404)) == repr(theirs.ClientError("x", 404)) == "ClientError(error=x)"
    assert ours.ClientError("x", 404).http_code == 404


def _basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def test_basic_auth_forms_as_confluents() -> None:
    def steps(avro: types.ModuleType, front: RegistryFront) -> Any:
        host = front.url.removeprefix("http://")
        confs = [
            {"url": f"http://alice:p%40ss@{host}"},
            {"url": front.url, "basic.auth.credentials.source": "USER_INFO", "basic.auth.user.info": "bob:secret"},
            {
                "url": front.url,
                "basic.auth.credentials.source": "SASL_INHERIT",
                "sasl.mechanism": "PLAIN",
                "sasl.username": "carol",
                "sasl.password": "pw",
            },
        ]
        return [avro.CachedSchemaRegistryClient(conf).register("auth-value", avro.loads(VALUE)) for conf in confs]

    done = _each_side(steps)
    assert done["kafkawire"] == done["confluent-kafka"]
    assert done["kafkawire"][2] == [_basic("alice", "p@ss"), _basic("bob", "secret"), _basic("carol", "pw")]


def test_mutual_tls_as_confluents(tmp_path: Path) -> None:
    ca = make_ca(tmp_path)
    server, client = make_leaf(tmp_path, "registry", ca), make_leaf(tmp_path, "client", ca, client=True)
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(server.cert, server.key)
    tls.verify_mode = ssl.CERT_REQUIRED
    tls.load_verify_locations(ca.cert)
    seen = {}
    for side, avro in SIDES.items():
        with registry_front(tls) as front:
            conf = {"url": front.url, "ssl.ca.location": str(ca.cert)}
            conf |= {"ssl.certificate.location": str(client.cert), "ssl.key.location": str(client.key)}
            registered = avro.CachedSchemaRegistryClient(conf).register("tls-value", avro.loads(VALUE))
            untrusted = _outcome(
                lambda: avro.CachedSchemaRegistryClient({"url": front.url}).register("x-value", avro.loads(VALUE))  # noqa: B023
            )
            seen[side] = (registered, untrusted[0], "CERTIFICATE_VERIFY_FAILED" in str(untrusted), front.requests)
    assert seen["kafkawire"] == seen["confluent-kafka"]
    assert seen["kafkawire"][:3] == (1, "error", True)


# AvroProducer and AvroConsumer on Tansu ------------------------------------------------------------


def _produce_steps(avro: types.ModuleType, bootstrap: str, url: str, topic: str) -> list[Any]:
    """Records of every schema form, and the refusals, through ``avro``'s AvroProducer."""
    p = avro.AvroProducer(
        {"bootstrap.servers": bootstrap, "schema.registry.url": url, "linger.ms": 5},
        default_key_schema=avro.loads('"string"'),
        default_value_schema=avro.loads(VALUE),
    )
    sends: list[dict[str, Any]] = [
        {"value": {"n": 1}, "key": "k1"},
        {"value": {"n": 2}},
        {"key": "only-key"},
        {"value": "primitive", "value_schema": avro.loads('"string"')},
        {"value": 42, "key": 7, "value_schema": avro.loads('"int"'), "key_schema": avro.loads('"long"')},
        {"value": None, "key": "tombstone"},
        {"value": "u", "value_schema": avro.loads('["null","string"]')},
        {"value": ORDER, "value_schema": avro.loads(NESTED)},
        {"value": {"n": 3, "tag": "t"}, "value_schema": EVOLVED},  # JSON text as the schema
        {"value": 2.5, "value_schema": '"double"', "headers": [("h", b"v")]},
    ]
    refused: list[dict[str, Any]] = [
        {"value": {"n": "x"}},
        {"value": {"n": 1}, "topic": ""},
        {"value": 1, "value_schema": None},
        {"key": "k", "key_schema": ""},
        {"value": {"n": 1}, "value_schema": {"type": "int"}},
    ]
    out = []
    for kwargs in sends + refused:
        kwargs = {"topic": topic, "partition": 0, **kwargs}
        out.append(_outcome(lambda: p.produce(**kwargs)))  # noqa: B023
    out.append(_outcome(lambda: p.produce(topic, {"n": 1})))  # by name only
    out.append(p.flush(15))
    return out


READER = (
    '{"type":"record","name":"V","namespace":"legacy","fields":[{"name":"n","type":"int"},'
    '{"name":"m","type":"int","default":7}]}'
)


def _consume_steps(
    avro: types.ModuleType, bootstrap: str, url: str, topic: str, count: int, reader: str | None = None
) -> list[Any]:
    c = avro.AvroConsumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": unique_name("legacy"),
            "auto.offset.reset": "earliest",
            "schema.registry.url": url,
        },
        reader_value_schema=avro.loads(reader) if reader is not None else None,
    )
    got: list[Any] = []
    try:
        c.assign([TOPIC_PARTITION[avro.__name__](topic, 0, 0)])  # no group to join: the records are what is compared
        for _ in range(600):
            try:
                msg = c.poll(0.1)
            except Exception as e:
                got.append(("error", type(e).__name__, str(e)))
                continue
            if msg is not None and msg.error() is None:
                got.append((msg.offset(), _plain(msg.key()), _plain(msg.value())))
            if len(got) == count:
                break
    finally:
        c.close()
    return got


@pytest.mark.broker
def test_avro_producer_as_confluents(tansu: TansuBroker, topic_name: Callable[[str], str]) -> None:
    seen, written = {}, {}
    for side, avro in SIDES.items():
        topic = topic_name(side)
        with registry_front() as front, warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            steps = _produce_steps(avro, tansu.bootstrap, front.url, topic)
            seen[side] = (steps, [(method, path.replace(topic, "<topic>")) for method, path in front.requests])
            msgs = consume_all(tansu.bootstrap, topic, 10, timeout=30)
            written[side] = [(m.key(), m.value(), m.headers()) for m in msgs]
            decoded = _consume_steps(avro, tansu.bootstrap, front.url, topic, 10)
            seen[side] += (decoded,)
    assert seen["kafkawire"] == seen["confluent-kafka"]
    assert written["kafkawire"] == written["confluent-kafka"]
    outcomes = seen["kafkawire"][0]
    assert [o[0] for o in outcomes[:10]] == ["ok"] * 10 and outcomes[-1] == 0
    assert [o[0] for o in outcomes[10:16]] == ["error"] * 6
    assert len(written["kafkawire"]) == 10 and written["kafkawire"][3][1][:5] == b"\x00\x00\x00\x00\x03"
    assert seen["kafkawire"][2][7][2] == ORDER


@pytest.mark.broker
def test_avro_consumer_as_confluents(tansu: TansuBroker, topic_name: Callable[[str], str]) -> None:
    """Both consumers read what confluent-kafka's AvroProducer wrote, into a reader schema, and the
    payloads that are not the registry's framing or not Avro."""
    seen = {}
    with registry_front() as front, warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        topic = topic_name("reader")
        p = theirs.AvroProducer(
            {"bootstrap.servers": tansu.bootstrap, "schema.registry.url": front.url},
            default_key_schema=theirs.loads('"string"'),
            default_value_schema=theirs.loads(VALUE),
        )
        p.produce(topic=topic, value={"n": 1}, key="a", partition=0)
        assert p.flush(15) == 0
        raw = confluent_kafka.Producer(judge_config(tansu.bootstrap))
        # not the framing; too short; an id the registry does not have; not Avro after a known id
        for value in (
            b"not avro",
            b"\x00\x00\x00\x00\x01",
            b"\x00\x00\x00\x00\x63\x02",
            b"\x00\x00\x00\x00\x01\xff" * 3,
        ):
            raw.produce(topic, value, partition=0)
        assert raw.flush(15) == 0
        p.produce(topic=topic, value={"n": 2}, partition=0)
        assert p.flush(15) == 0
        for side, avro in SIDES.items():
            seen[side] = _consume_steps(avro, tansu.bootstrap, front.url, topic, 6, READER)
    assert seen["kafkawire"] == seen["confluent-kafka"]
    assert seen["kafkawire"][0] == (0, "a", {"n": 1, "m": 7}) and seen["kafkawire"][-1] == (5, None, {"n": 2, "m": 7})


def test_primitive_schemas_frame_as_confluents() -> None:
    """The audit's case: ``loads('"string"')`` as a value schema (and every other primitive)."""
    primitives = {"string": "s", "int": -3, "long": 2**40, "float": 0.5, "double": 1e300, "boolean": True}
    primitives |= {"bytes": b"\x00b", "null": None}
    seen = {}
    for side, avro in SIDES.items():
        with registry_front() as front:
            serializer = avro.MessageSerializer(avro.CachedSchemaRegistryClient({"url": front.url}))
            framed = [
                serializer.encode_record_with_schema("p", avro.loads(f'"{name}"'), value)
                for name, value in primitives.items()
            ]
            decoded = [_outcome(lambda: serializer.decode_message(f)) for f in framed]  # noqa: B023
            seen[side] = (framed, decoded, front.requests)
    assert seen["kafkawire"] == seen["confluent-kafka"]
    assert [d[1] for d in seen["kafkawire"][1][:-1]] == list(primitives.values())[:-1]
