"""Field and payload encryption (the ENCRYPT and ENCRYPT_PAYLOAD rules) and their KMS drivers.

Interoperation is judged by confluent-kafka: its executors decrypt what ours encrypt and ours
decrypt theirs, both clients reaching one DEK registry (confluent's in-process one behind the
loopback registry front) through their REST code; and by the Java client, whose DEKs and
ciphertexts (local KMS, secret "mysecret") ours must read. Also: DEK rotation, deterministic
encryption, contexts, shared KEKs, alternate KMS keys, and the failures (missing secret, missing
keys, bad ciphertext). The DEK registry clients and KMS drivers are tested in test_encryption_keys.py.
"""

from __future__ import annotations

import base64
import types
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka.schema_registry import Rule as TheirRule
from confluent_kafka.schema_registry import RuleKind as TheirKind
from confluent_kafka.schema_registry import RuleMode as TheirMode
from confluent_kafka.schema_registry import RuleParams as TheirParams
from confluent_kafka.schema_registry import RuleSet as TheirRuleSet
from confluent_kafka.schema_registry import Schema as TheirSchema
from confluent_kafka.schema_registry import SchemaRegistryClient as TheirRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer as TheirAvroDeserializer
from confluent_kafka.schema_registry.avro import AvroSerializer as TheirAvroSerializer
from confluent_kafka.schema_registry.rule_registry import RuleRegistry as TheirRuleRegistry
from confluent_kafka.schema_registry.rules.encryption.dek_registry.dek_registry_client import (
    DekAlgorithm as TheirDekAlgorithm,
)
from confluent_kafka.schema_registry.rules.encryption.dek_registry.mock_dek_registry_client import (
    MockDekRegistryClient as TheirMockDekRegistry,
)
from confluent_kafka.schema_registry.rules.encryption.encrypt_executor import EncryptionExecutor as TheirPayloadExecutor
from confluent_kafka.schema_registry.rules.encryption.encrypt_executor import (
    FieldEncryptionExecutor as TheirFieldExecutor,
)
from confluent_kafka.schema_registry.serde import FieldContext as TheirFieldContext
from confluent_kafka.schema_registry.serde import FieldType as TheirFieldType
from confluent_kafka.schema_registry.serde import RuleContext as TheirRuleContext
from confluent_kafka.serialization import MessageField as TheirField
from confluent_kafka.serialization import SerializationContext as TheirSerCtx

from kafkawire.schema_registry import SchemaRegistryClient
from kafkawire.schema_registry import rule_registry as rule_registry_module
from kafkawire.schema_registry.avro import AvroDeserializer, AvroSerializer
from kafkawire.schema_registry.common.rules import FieldContext, FieldType, RuleContext, RuleError
from kafkawire.schema_registry.common.schema_registry_client import Rule, RuleKind, RuleMode, RuleParams
from kafkawire.schema_registry.rule_registry import RuleRegistry
from kafkawire.schema_registry.rules.encryption.cryptor import local_kms_aead
from kafkawire.schema_registry.rules.encryption.dek_registry.dek_registry_client import (
    DekAlgorithm,
    DekRegistryClient,
    context_for,
)
from kafkawire.schema_registry.rules.encryption.encrypt_executor import (
    Clock,
    EncryptionExecutor,
    FieldEncryptionExecutor,
)
from kafkawire.schema_registry.rules.encryption.kms_driver_registry import KmsDriver, register_kms_driver
from kafkawire.schema_registry.rules.encryption.localkms.local_driver import LocalKmsDriver
from kafkawire.serialization import MessageField, SerializationContext
from tests.serde import registry_front as registry_front_module
from tests.serde.registry_front import RegistryFront, registry_front

SECRET = "mysecret"
TOPIC = "topic1"
SUBJECT = "topic1-value"
LOCAL = {"encrypt.kek.name": "kek1", "encrypt.kms.type": "local-kms", "encrypt.kms.key.id": "mykey"}
DAY_MS = 24 * 60 * 60 * 1000

LocalKmsDriver.register()


class FakeClock(Clock):
    def __init__(self) -> None:
        self.fixed_now = Clock().now()

    def now(self) -> int:
        return self.fixed_now


def mock_url() -> str:
    return f"mock://{uuid.uuid4()}"


def ours(url: str, rule_conf: dict[str, Any] | None = None, clock: Clock | None = None) -> FieldEncryptionExecutor:
    executor = FieldEncryptionExecutor(clock)
    executor.configure({"url": url}, {"secret": SECRET} if rule_conf is None else rule_conf)
    return executor


def our_ctx(mode: str, params: dict[str, str], rule_type: str = "ENCRYPT", subject: str = SUBJECT) -> RuleContext:
    rule = Rule(
        "encrypt",
        None,
        RuleKind.TRANSFORM,
        RuleMode.WRITEREAD,
        rule_type,
        ["PII"],
        RuleParams(params),
        None,
        None,
        "ERROR,ERROR",
        None,
    )
    return RuleContext(
        SerializationContext(TOPIC, MessageField.VALUE),
        None,
        None,
        subject,
        RuleMode(mode),
        rule,
        0,
        [rule],
        None,
        None,
    )


def our_field(
    executor: FieldEncryptionExecutor,
    mode: str,
    value: Any,
    kind: str = "STRING",
    params: dict[str, str] = LOCAL,
    subject: str = SUBJECT,
) -> Any:
    ctx = our_ctx(mode, params, subject=subject)
    field = FieldContext(None, "test.f1", "f1", FieldType[kind], {"PII"})
    return executor.new_transform(ctx)(ctx, field, value)


def their_ctx(mode: str, params: dict[str, str], rule_type: str = "ENCRYPT") -> Any:
    rule = TheirRule(
        "encrypt",
        None,
        TheirKind.TRANSFORM,
        TheirMode.WRITEREAD,
        rule_type,
        ["PII"],
        TheirParams(params),
        None,
        None,
        "ERROR,ERROR",
        None,
    )
    return TheirRuleContext(
        None, TheirSerCtx(TOPIC, TheirField.VALUE), None, None, SUBJECT, TheirMode(mode), rule, 0, [rule], None, None
    )


def their_field(executor: Any, mode: str, value: Any, kind: str = "STRING", params: dict[str, str] = LOCAL) -> Any:
    ctx = their_ctx(mode, params)
    field = TheirFieldContext(None, "test.f1", "f1", TheirFieldType[kind], {"PII"})
    return executor.new_transform(ctx)(ctx, field, value)


def _flag(query: dict[str, list[str]], name: str) -> bool:
    return query.get(name, ["false"])[0] == "true"


def _dek_routes(store: TheirMockDekRegistry) -> list[Any]:
    """The DEK registry's REST routes, answered by confluent's in-process DEK registry. Like a
    registry, a DEK's plain key material is never sent for a KEK that is not shared."""
    import re

    def public(dek: Any) -> Any:
        d = dek.to_dict()
        if not store.get_kek(dek.kek_name, context=context_for(dek.subject)).shared:
            d.pop("keyMaterial", None)
        return d

    def kek_post(m: Any, q: Any, body: Any) -> Any:
        context = q.get("context", [None])[0]
        return store.register_kek(
            body["name"],
            body["kmsType"],
            body["kmsKeyId"],
            body.get("shared", False),
            body.get("kmsProps"),
            body.get("doc"),
            context=context,
        ).to_dict()

    def kek_get(m: Any, q: Any, body: Any) -> Any:
        return store.get_kek(m[1], _flag(q, "deleted"), q.get("context", [None])[0]).to_dict()

    def dek_post(m: Any, q: Any, body: Any) -> Any:
        algorithm = TheirDekAlgorithm(body.get("algorithm", "AES256_GCM"))
        return public(
            store.register_dek(m[1], m[2], body.get("encryptedKeyMaterial"), algorithm, body.get("version", 1))
        )

    def dek_get(m: Any, q: Any, body: Any) -> Any:
        algorithm = TheirDekAlgorithm(q["algorithm"][0])
        return public(store.get_dek(m[1], m[2], algorithm, int(m[3]), _flag(q, "deleted")))

    keks = "/dek-registry/v1/keks"
    return [
        ("POST", re.compile(keks), kek_post),
        ("GET", re.compile(keks + r"/([^/]+)"), kek_get),
        ("POST", re.compile(keks + r"/([^/]+)/deks/([^/]+)"), dek_post),
        ("GET", re.compile(keks + r"/([^/]+)/deks/([^/]+)/versions/(-?\d+)"), dek_get),
    ]


@pytest.fixture(scope="module")
def their_local_kms() -> None:
    """confluent-kafka's local KMS driver, which needs hkdf (in its [rules] extra)."""
    pytest.importorskip("hkdf", reason="confluent-kafka's local KMS needs hkdf: pip install hkdf==0.0.3")
    from confluent_kafka.schema_registry.rules.encryption.localkms.local_driver import LocalKmsDriver as Theirs

    Theirs.register()


@pytest.fixture
def dek_front(
    monkeypatch: pytest.MonkeyPatch, their_local_kms: None
) -> Iterator[tuple[RegistryFront, TheirMockDekRegistry]]:
    """confluent's schema registry and DEK registry behind one loopback URL."""
    store = TheirMockDekRegistry({"url": "mock://"})
    routes = registry_front_module._routes
    monkeypatch.setattr(registry_front_module, "_routes", lambda reg: routes(reg) + _dek_routes(store))
    with registry_front() as front:
        yield front, store


def theirs(front: RegistryFront, clock: Any = None) -> Any:
    executor = TheirFieldExecutor() if clock is None else TheirFieldExecutor(clock)
    executor.configure({"url": front.url}, {"secret": SECRET})
    return executor


# --- bytes made by the Java client -----------------------------------------------------------------

JAVA = [  # (kek, algorithm, expiry days, encrypted DEK, ciphertext of "hello world") from confluent's tests
    (
        "kek1-f1",
        "AES256_GCM",
        None,
        "07V2ndh02DA73p+dTybwZFm7DKQSZN1tEwQh+FoX1DZLk4Yj2LLu4omYjp/84tAg3BYlkfGSz+zZacJHIE4=",
        "hzgy/jFNMV/eFilaHrMyeBgdaVzrR0udGeotW8cA/Jal7ukr+M/yz",
    ),
    (
        "kek1-det-f1",
        "AES256_SIV",
        None,
        "YSx3DTlAHrmpoDChquJMifmPntBzxgRVdMzgYL82rgWBKn7aUSnG+WIu9ozBNS3y2vXd++mBtK07w4/W/G6w0da39X9hfOVZsGnkSvry/QRht84V8yz3dqKxGMOK5A==",
        "HD6YtxrlBnkTWW9N6Vbk3IInjWH81xmYh3k4d",
    ),
    (
        "kek1-rot-f1",
        "AES256_GCM",
        "1",
        "W/v6hOQYq1idVAcs1pPWz9UUONMVZW4IrglTnG88TsWjeCjxmtRQ4VaNe/I5dCfm2zyY9Cu0nqdvqImtUk4=",
        "xAAAAAAG4HI6b1nXPXqLyG8cII35NHQseqqUCd+IeLeFVAeNpSS3fxPnJ32A=",
    ),
]


@pytest.mark.parametrize(("kek", "algorithm", "expiry", "encrypted_dek", "ciphertext"), JAVA)
def test_reads_what_the_java_client_wrote(
    kek: str, algorithm: str, expiry: str | None, encrypted_dek: str, ciphertext: str
) -> None:
    executor = ours(mock_url())
    client = executor.executor.client
    assert client is not None
    client.register_kek(kek, "local-kms", "mykey")
    client.register_dek(kek, SUBJECT, encrypted_dek, algorithm=DekAlgorithm(algorithm))
    params = {**LOCAL, "encrypt.kek.name": kek, "encrypt.dek.algorithm": algorithm}
    if expiry is not None:
        params["encrypt.dek.expiry.days"] = expiry
    # The Avro string's first character was its length byte: the field is what follows it.
    assert our_field(executor, "READ", ciphertext[1:], params=params) == "hello world"


# --- with confluent-kafka, through one DEK registry ------------------------------------------------


@pytest.mark.parametrize("algorithm", ["AES128_GCM", "AES256_GCM", "AES256_SIV"])
@pytest.mark.parametrize(("kind", "plain"), [("STRING", "hi there"), ("BYTES", b"\x00\x01bytes")])
def test_confluent_and_ours_read_each_other(dek_front: Any, algorithm: str, kind: str, plain: Any) -> None:
    front, _ = dek_front
    params = {**LOCAL, "encrypt.dek.algorithm": algorithm}
    mine, their = ours(front.url), theirs(front)
    from_us = our_field(mine, "WRITE", plain, kind, params)
    assert from_us != plain and type(from_us) is type(plain)
    assert their_field(their, "READ", from_us, kind, params) == plain
    from_them = their_field(their, "WRITE", plain, kind, params)
    assert our_field(ours(front.url), "READ", from_them, kind, params) == plain
    if algorithm == "AES256_SIV":  # deterministic: one DEK gives one ciphertext, whoever encrypts
        assert from_us == from_them == our_field(mine, "WRITE", plain, kind, params)
    else:
        assert from_us != our_field(mine, "WRITE", plain, kind, params)
    paths = {p for _, p in front.requests}
    assert {
        "/dek-registry/v1/keks",
        "/dek-registry/v1/keks/kek1",
        "/dek-registry/v1/keks/kek1/deks/topic1-value",
    } <= paths


def test_payload_encryption_both_ways(dek_front: Any) -> None:
    front, _ = dek_front
    mine = EncryptionExecutor()
    mine.configure({"url": front.url}, {"secret": SECRET})
    their = TheirPayloadExecutor()
    their.configure({"url": front.url}, {"secret": SECRET})
    payload = b"\x02\x0ahello-avro"
    ciphertext = mine.transform(our_ctx("WRITE", LOCAL, "ENCRYPT_PAYLOAD"), payload)
    assert their.transform(their_ctx("READ", LOCAL, "ENCRYPT_PAYLOAD"), ciphertext) == payload
    ciphertext = their.transform(their_ctx("WRITE", LOCAL, "ENCRYPT_PAYLOAD"), payload)
    assert mine.transform(our_ctx("READ", LOCAL, "ENCRYPT_PAYLOAD"), ciphertext) == payload


def test_dek_rotation(dek_front: Any) -> None:
    front, store = dek_front
    params = {**LOCAL, "encrypt.kek.name": "kek-rot", "encrypt.dek.expiry.days": "1"}
    clock = FakeClock()
    mine = ours(front.url, clock=clock)
    first = our_field(mine, "WRITE", b"payload", "BYTES", params)
    assert first[:5] == b"\x00\x00\x00\x00\x01"
    assert our_field(mine, "WRITE", b"payload", "BYTES", params)[:5] == b"\x00\x00\x00\x00\x01"  # not expired yet
    clock.fixed_now += 2 * DAY_MS
    second = our_field(mine, "WRITE", b"payload", "BYTES", params)
    assert second[:5] == b"\x00\x00\x00\x00\x02"
    assert store.get_dek("kek-rot", SUBJECT, version=-1).version == 2
    clock.fixed_now += 2 * DAY_MS
    assert base64.b64decode(our_field(mine, "WRITE", "text", "STRING", params))[:5] == b"\x00\x00\x00\x00\x03"
    reader = ours(front.url)
    their = theirs(front)
    for ciphertext in (first, second):  # every version stays readable, by both clients
        assert our_field(reader, "READ", ciphertext, "BYTES", params) == b"payload"
        assert their_field(their, "READ", ciphertext, "BYTES", params) == b"payload"
    from_them = their_field(their, "WRITE", b"payload", "BYTES", params)  # their clock: version 3 is fresh
    assert from_them[:5] == b"\x00\x00\x00\x00\x03"
    assert our_field(reader, "READ", from_them, "BYTES", params) == b"payload"


def test_kek_in_a_registry_context(dek_front: Any) -> None:
    front, store = dek_front
    subject = ":.team:orders-value"
    assert context_for(subject) == ".team" and context_for(":.:orders-value") is None and context_for("x") is None
    mine = ours(front.url)
    ciphertext = our_field(mine, "WRITE", "pii", params=LOCAL, subject=subject)
    assert store.get_kek("kek1", context=".team").kms_key_id == "mykey"
    assert our_field(ours(front.url), "READ", ciphertext, params=LOCAL, subject=subject) == "pii"
    assert ("GET", "/dek-registry/v1/keks/kek1/deks/%3A.team%3Aorders-value/versions/1") in front.requests


def test_serdes_of_both_clients_read_each_other(dek_front: Any) -> None:
    front, _ = dek_front
    schema = (
        '{"type": "record", "name": "P", "fields": [{"name": "id", "type": "int"},'
        ' {"name": "ssn", "type": "string", "confluent:tags": ["PII"]}]}'
    )
    rule = TheirRule(
        "encrypt",
        None,
        TheirKind.TRANSFORM,
        TheirMode.WRITEREAD,
        "ENCRYPT",
        ["PII"],
        TheirParams(LOCAL),
        None,
        None,
        "ERROR,ERROR",
        False,
    )
    their_client = TheirRegistryClient({"url": front.url})
    their_client.register_schema(SUBJECT, TheirSchema(schema, "AVRO", [], None, TheirRuleSet(None, [rule])))
    their_rules = TheirRuleRegistry()
    their_rules.register_executor(TheirFieldExecutor())
    our_rules = RuleRegistry()
    our_rules.register_executor(FieldEncryptionExecutor())
    latest = {"auto.register.schemas": False, "use.latest.version": True}
    rule_conf = {"secret": SECRET}
    our_client = SchemaRegistryClient({"url": front.url})
    their_ser = TheirAvroSerializer(their_client, None, conf=latest, rule_conf=rule_conf, rule_registry=their_rules)
    our_ser = AvroSerializer(our_client, None, conf=latest, rule_conf=rule_conf, rule_registry=our_rules)
    their_de = TheirAvroDeserializer(their_client, rule_conf=rule_conf, rule_registry=their_rules)
    our_de = AvroDeserializer(our_client, rule_conf=rule_conf, rule_registry=our_rules)
    ctx, their_ctx_ = SerializationContext(TOPIC, MessageField.VALUE), TheirSerCtx(TOPIC, TheirField.VALUE)
    for _ in range(2):
        from_them = their_ser({"id": 1, "ssn": "123-45-6789"}, their_ctx_)
        assert b"123-45-6789" not in from_them
        assert our_de(from_them, ctx) == {"id": 1, "ssn": "123-45-6789"}
        from_us = our_ser({"id": 2, "ssn": "987-65-4321"}, ctx)
        assert b"987-65-4321" not in from_us
        assert their_de(from_us, their_ctx_) == {"id": 2, "ssn": "987-65-4321"}


# --- failures ------------------------------------------------------------------------------------------


def _chain(e: BaseException | None) -> str:
    """Every message and repr down an exception's causes."""
    seen = []
    while e is not None:
        seen += [str(e), repr(e)]
        e = e.__cause__ or e.__context__
    return "\n".join(seen)


def test_missing_or_wrong_secret_is_a_clear_error_without_the_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    url = mock_url()
    ciphertext = our_field(ours(url), "WRITE", "pii")
    monkeypatch.delenv("LOCAL_SECRET", raising=False)
    with pytest.raises(RuleError) as no_secret:
        our_field(ours(url, {}), "READ", ciphertext)
    assert "LOCAL_SECRET" in str(no_secret.value) and "kek1" in str(no_secret.value)
    with pytest.raises(RuleError) as wrong:
        our_field(ours(url, {"secret": "not-" + SECRET}), "READ", ciphertext)
    assert "could not unwrap" in str(wrong.value)
    for e in (no_secret.value, wrong.value):
        assert SECRET not in _chain(e)
    monkeypatch.setenv("LOCAL_SECRET", SECRET)
    assert our_field(ours(url, {}), "READ", ciphertext) == "pii"
    assert SECRET not in repr(ours(url))


def test_bad_ciphertext_is_a_rule_error(monkeypatch: pytest.MonkeyPatch) -> None:
    url = mock_url()
    executor = ours(url)
    ciphertext = our_field(executor, "WRITE", b"data", "BYTES")
    tampered = ciphertext[:-1] + bytes([ciphertext[-1] ^ 1])
    for bad in (tampered, b"", b"short"):
        with pytest.raises(RuleError, match="could not decrypt"):
            our_field(executor, "READ", bad, "BYTES")
    with pytest.raises(RuleError):
        our_field(executor, "READ", "not base64 at all!", "STRING")
    with pytest.raises(RuleError, match="not UTF-8"):
        our_field(executor, "READ", base64.b64encode(our_field(executor, "WRITE", b"\xff\xfe", "BYTES")).decode())
    rotating = {**LOCAL, "encrypt.dek.expiry.days": "1"}
    with pytest.raises(RuleError, match="does not start with its DEK version"):
        our_field(executor, "READ", b"\x00\x00", "BYTES", rotating)
    with pytest.raises(RuleError, match="no DEK version 9"):
        our_field(executor, "READ", b"\x00\x00\x00\x00\x09" + ciphertext, "BYTES", rotating)


def test_missing_keys_and_bad_parameters() -> None:
    executor = ours(mock_url())
    with pytest.raises(RuleError, match="no KEK kek1 found"):
        our_field(executor, "READ", "c2VjcmV0")
    with pytest.raises(RuleError, match=r"encrypt\.kms\.type"):
        our_field(executor, "WRITE", "x", params={"encrypt.kek.name": "kek1"})
    with pytest.raises(RuleError, match=r"no encrypt\.kek\.name"):
        our_field(executor, "WRITE", "x", params={})
    with pytest.raises(RuleError, match="is not one of"):
        our_field(executor, "WRITE", "x", params={**LOCAL, "encrypt.dek.algorithm": "DES"})
    with pytest.raises(RuleError, match="whole number of days"):
        our_field(executor, "WRITE", "x", params={**LOCAL, "encrypt.dek.expiry.days": "-1"})
    our_field(executor, "WRITE", "x")
    with pytest.raises(RuleError, match="KMS key id mykey"):
        our_field(executor, "WRITE", "x", params={**LOCAL, "encrypt.kms.key.id": "otherkey"})
    with pytest.raises(RuleError, match="no DEK version 1"):  # the KEK exists, no AES256_SIV DEK does
        our_field(executor, "READ", "c2VjcmV0", params={**LOCAL, "encrypt.dek.algorithm": "AES256_SIV"})
    with pytest.raises(RuleError, match="INT not supported"):
        our_field(executor, "WRITE", 5, "INT")
    assert our_field(executor, "READ", 5, "INT") == 5
    assert our_field(executor, "WRITE", None) is None
    with pytest.raises(RuleError, match="not configured"):
        our_field(FieldEncryptionExecutor(), "WRITE", "x")
    with pytest.raises(RuleError, match="no KMS driver registered for nokms://"):
        our_field(executor, "WRITE", "x", params={**LOCAL, "encrypt.kek.name": "k2", "encrypt.kms.type": "nokms"})


def test_configure_merges_and_refuses_conflicts() -> None:
    executor = FieldEncryptionExecutor()
    executor.configure({"url": "mock://conf"}, {"key": "value"})
    executor.configure({"url": "mock://conf"}, {"key": "value"})
    executor.configure({"url": "mock://conf"}, {"key2": "value2"})
    assert executor.executor.config == {"key": "value", "key2": "value2"}
    with pytest.raises(RuleError, match="executor already configured"):
        executor.configure({"url": "mock://other"}, {})
    with pytest.raises(RuleError, match=r"rule config key already set: key$") as e:
        executor.configure({"url": "mock://conf"}, {"key": "value3", "key3": "x"})
    assert "value3" not in str(e.value) and "key3" not in executor.executor.config
    assert executor.type() == "ENCRYPT" and executor.executor.type() == "ENCRYPT_PAYLOAD"


def test_register_puts_the_executor_in_the_process_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rule_registry_module, "_global_instance", RuleRegistry())
    field = FieldEncryptionExecutor.register()
    payload = EncryptionExecutor.register_with_clock(FakeClock())
    assert RuleRegistry.get_global_instance().get_executor("ENCRYPT") is field
    assert RuleRegistry.get_global_instance().get_executor("ENCRYPT_PAYLOAD") is payload
    assert isinstance(payload.clock, FakeClock)


# --- shared KEKs and alternate KMS keys ---------------------------------------------------------------


def test_shared_kek_dek_is_made_by_the_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    url = mock_url()
    DekRegistryClient.new_client({"url": url}).register_kek("kek1", "local-kms", "mykey", shared=True)
    ciphertext = our_field(ours(url), "WRITE", "pii")
    dek = DekRegistryClient.new_client({"url": url}).get_dek("kek1", SUBJECT)
    assert dek.encrypted_key_material is None and dek.key_material is not None
    assert dek.key_material not in repr(dek)
    monkeypatch.delenv("LOCAL_SECRET", raising=False)
    assert our_field(ours(url, {}), "READ", ciphertext) == "pii"  # no KMS needed: the registry unwrapped it


class _FlakyKms(KmsDriver):
    """Keys named "broken" fail; the others share one AEAD."""

    def get_key_url_prefix(self) -> str:
        return "flaky-kms://"

    def new_kms_client(self, conf: dict[str, Any], key_url: str | None) -> Any:
        if key_url is not None and key_url.endswith("broken"):
            raise RuntimeError("KMS unavailable")
        aead = local_kms_aead("flaky")
        return types.SimpleNamespace(get_aead=lambda uri: aead)


def test_alternate_kms_keys_are_tried_in_turn() -> None:
    register_kms_driver(_FlakyKms())
    params = {"encrypt.kek.name": "kek-flaky", "encrypt.kms.type": "flaky-kms", "encrypt.kms.key.id": "broken"}
    url = mock_url()
    ciphertext = our_field(ours(url, {"encrypt.alternate.kms.key.ids": "broken, good"}), "WRITE", "x", params=params)
    assert our_field(ours(url, {"encrypt.alternate.kms.key.ids": "good"}), "READ", ciphertext, params=params) == "x"
    with pytest.raises(RuleError, match=r"could not unwrap .* key\(s\) broken\): KMS unavailable"):
        our_field(ours(url, {}), "READ", ciphertext, params=params)
