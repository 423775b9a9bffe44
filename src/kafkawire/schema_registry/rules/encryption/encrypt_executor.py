"""The ENCRYPT (fields) and ENCRYPT_PAYLOAD (serialized payload) rule executors.

Envelope encryption: data is encrypted with a DEK (a Tink key, one per subject, kept by the DEK
registry wrapped by a KEK), the KEK lives in a KMS. On write a missing KEK is registered from
the rule's ``encrypt.kms.type`` / ``encrypt.kms.key.id`` and a missing DEK is made, wrapped and
registered; on read both must exist. With ``encrypt.dek.expiry.days`` the DEK is rotated: a new
version is made when the latest is older than that, and each ciphertext starts with the version
it was made with (byte 0, then the version as a 4-byte big-endian int). A string field's
ciphertext is base64, so the field stays a string; a bytes field's stays bytes.
"""

from __future__ import annotations

import base64
import io
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from ...common.rules import FieldContext, FieldRuleExecutor, FieldTransform, FieldType, RuleContext, RuleExecutor
from ...common.schema_registry_client import RuleMode
from ...common.serde import MAGIC_BYTE_V0, RuleError
from ...error import SchemaRegistryError
from ...rule_registry import RuleRegistry
from .cryptor import NO_ASSOCIATED_DATA, CryptoError, Cryptor
from .dek_registry.dek_registry_client import LATEST, Dek, DekAlgorithm, DekRegistryClient, Kek, context_for
from .dek_registry.dek_registry_client import DekId as DekId
from .dek_registry.dek_registry_client import KekId as KekId
from .kms_driver_registry import Aead, KmsClient, get_kms_driver
from .kms_driver_registry import KmsDriver as KmsDriver

__all__ = [
    "AeadWrapper",
    "Clock",
    "EncryptionExecutor",
    "EncryptionExecutorTransform",
    "FieldEncryptionExecutor",
    "FieldEncryptionExecutorTransform",
]

log = logging.getLogger(__name__)

ENCRYPT_KEK_NAME = "encrypt.kek.name"
ENCRYPT_KMS_KEY_ID = "encrypt.kms.key.id"
ENCRYPT_KMS_TYPE = "encrypt.kms.type"
ENCRYPT_DEK_ALGORITHM = "encrypt.dek.algorithm"
ENCRYPT_DEK_EXPIRY_DAYS = "encrypt.dek.expiry.days"
ENCRYPT_ALTERNATE_KMS_KEY_IDS = "encrypt.alternate.kms.key.ids"

MILLIS_IN_DAY = 24 * 60 * 60 * 1000
_VERSION_HEADER = 5  # the magic byte and a 4-byte DEK version before a rotated DEK's ciphertext


class Clock:
    """Milliseconds since the epoch: what a DEK's age is measured against (tests move it)."""

    def now(self) -> int:
        return int(time.time() * 1000)


def _param(ctx: RuleContext, name: str) -> str | None:
    value = ctx.get_parameter(name)
    return value if value else None


class EncryptionExecutor(RuleExecutor):
    """ENCRYPT_PAYLOAD: the serialized payload (bytes) encrypted on write, decrypted on read.

    ``client`` is the DEK registry client, made by ``configure`` from the schema registry
    client's configuration; ``config`` the rule configuration (the KMS drivers' settings, such
    as the local KMS ``secret``), merged across the serdes that configure the executor.
    """

    def __init__(self, clock: Clock | None = None) -> None:
        self.client: DekRegistryClient | None = None
        self.config: dict[str, Any] = {}
        self.clock = clock if clock is not None else Clock()
        self._lock = threading.Lock()
        self._cryptors: dict[DekAlgorithm, Cryptor] = {}
        self._kms_clients: dict[tuple[str, tuple[tuple[str, str], ...]], KmsClient] = {}

    def __repr__(self) -> str:
        return f"{type(self).__name__}(config keys={sorted(self.config)})"

    def configure(self, client_conf: dict[str, Any], rule_conf: dict[str, Any]) -> None:
        """Every serde configures the registered executors: they must agree on the registry
        and on the value of any rule configuration key they both set."""
        with self._lock:
            if client_conf:
                if self.client is None:
                    self.client = DekRegistryClient.new_client(client_conf)
                elif self.client.config() != client_conf:
                    # same text as confluent-kafka: its tests match on it
                    raise RuleError("executor already configured")
            for key, value in (rule_conf or {}).items():
                if key in self.config and self.config[key] != value:
                    # same text as confluent-kafka: its tests match on it
                    raise RuleError(f"rule config key already set: {key}")
            added = {k: v for k, v in (rule_conf or {}).items() if k not in self.config}
            if added:
                self.config.update(added)
                self._kms_clients.clear()

    def type(self) -> str:
        return "ENCRYPT_PAYLOAD"

    def transform(self, ctx: RuleContext, message: Any) -> Any:
        return self.new_transform(ctx).transform(ctx, FieldType.BYTES, message)

    def new_transform(self, ctx: RuleContext) -> EncryptionExecutorTransform:
        """The encryption of one rule for one record, its parameters read and checked."""
        kek_name = _param(ctx, ENCRYPT_KEK_NAME)
        if kek_name is None:
            raise RuleError(f"rule {ctx.rule.name!r}: no {ENCRYPT_KEK_NAME} parameter")
        name = _param(ctx, ENCRYPT_DEK_ALGORITHM) or DekAlgorithm.AES256_GCM.value
        try:
            algorithm = DekAlgorithm(name)
        except ValueError:
            known = ", ".join(a.value for a in DekAlgorithm)
            raise RuleError(f"{ENCRYPT_DEK_ALGORITHM} {name!r} is not one of {known}") from None
        expiry = _param(ctx, ENCRYPT_DEK_EXPIRY_DAYS) or "0"
        try:
            expiry_days = int(expiry)
        except ValueError:
            expiry_days = -1
        if expiry_days < 0:
            raise RuleError(f"{ENCRYPT_DEK_EXPIRY_DAYS} must be a whole number of days >= 0, not {expiry!r}")
        with self._lock:
            cryptor = self._cryptors.get(algorithm)
            if cryptor is None:
                cryptor = self._cryptors[algorithm] = Cryptor(algorithm)
        return EncryptionExecutorTransform(self, cryptor, kek_name, expiry_days)

    def kms_aead(self, kek: Kek, kms_key_id: str) -> Aead:
        """The AEAD of one of the KEK's KMS keys; clients are kept per key URL and KMS settings."""
        key_url, props = _kms_key(kek, kms_key_id)
        cache_key = (key_url, tuple(sorted(props.items())))
        with self._lock:
            client = self._kms_clients.get(cache_key)
            conf = {**self.config, **props}
        if client is None:
            client = get_kms_driver(key_url).new_kms_client(conf, key_url)
            with self._lock:
                self._kms_clients[cache_key] = client
        return client.get_aead(key_url)

    def close(self) -> None:
        if self.client is not None:
            self.client.close()

    @classmethod
    def register(cls) -> EncryptionExecutor:
        return cls.register_with_clock(Clock())

    @classmethod
    def register_with_clock(cls, clock: Clock) -> EncryptionExecutor:
        executor = cls(clock)
        RuleRegistry.register_rule_executor(executor)
        return executor


def _kms_key(kek: Kek, kms_key_id: str) -> tuple[str, dict[str, str]]:
    """The key's URL and the KEK's KMS properties."""
    if not kek.kms_type:
        raise RuleError(f"KEK {kek.name} has no KMS type")
    return f"{kek.kms_type}://{kms_key_id}", dict(kek.kms_props.properties if kek.kms_props is not None else {})


def _new_kms_aead(config: dict[str, Any], kek: Kek, kms_key_id: str) -> Aead:
    key_url, props = _kms_key(kek, kms_key_id)
    return get_kms_driver(key_url).new_kms_client({**config, **props}, key_url).get_aead(key_url)


class AeadWrapper:
    """Wraps and unwraps DEKs with the KEK's KMS key, falling back to its alternates in turn
    (``encrypt.alternate.kms.key.ids`` in the KEK's KMS properties or ``config``). ``kms_aead``
    gives a key's AEAD (an executor's keeps its KMS clients); without it a client is made per call."""

    def __init__(self, config: dict[str, Any], kek: Kek, kms_aead: Callable[[Kek, str], Aead] | None = None) -> None:
        self._kek = kek
        self._kms_aead = kms_aead or (lambda k, key_id: _new_kms_aead(config, k, key_id))
        props = kek.kms_props.properties if kek.kms_props is not None else {}
        alternates = props.get(ENCRYPT_ALTERNATE_KMS_KEY_IDS) or config.get(ENCRYPT_ALTERNATE_KMS_KEY_IDS)
        self._key_ids = [kek.kms_key_id or ""]
        self._key_ids += [k.strip() for k in str(alternates or "").split(",") if k.strip()]

    def encrypt(self, plaintext: bytes, associated_data: bytes = NO_ASSOCIATED_DATA) -> bytes:
        return self._each("wrap", lambda aead: aead.encrypt(plaintext, associated_data))

    def decrypt(self, ciphertext: bytes, associated_data: bytes = NO_ASSOCIATED_DATA) -> bytes:
        return self._each("unwrap", lambda aead: aead.decrypt(ciphertext, associated_data))

    def _each(self, verb: str, op: Callable[[Aead], bytes]) -> bytes:
        last: Exception | None = None
        for key_id in self._key_ids:
            try:
                return op(self._kms_aead(self._kek, key_id))
            except Exception as e:
                last = e
                if key_id != self._key_ids[-1]:
                    log.warning(
                        "could not %s a DEK with KEK %s key %s, trying the next: %s", verb, self._kek.name, key_id, e
                    )
        raise RuleError(
            f"could not {verb} the DEK with KEK {self._kek.name} ({self._kek.kms_type} key(s) "
            f"{', '.join(self._key_ids)}): {last}"
        ) from last


class EncryptionExecutorTransform:
    """One rule applied to one record: its KEK (looked up once), DEK algorithm (the cryptor's) and
    rotation (DEKs expire after ``dek_expiry_days``; 0: never)."""

    def __init__(self, executor: EncryptionExecutor, cryptor: Cryptor, kek_name: str, dek_expiry_days: int) -> None:
        self._executor = executor
        self._algorithm = DekAlgorithm(cryptor.dek_format)
        self._cryptor = cryptor
        self._kek_name = kek_name
        self._expiry_days = dek_expiry_days
        self._kek: Kek | None = None

    @property
    def _rotating(self) -> bool:
        return self._expiry_days > 0

    def transform(self, ctx: RuleContext, field_type: FieldType, value: Any) -> Any:
        """The value encrypted (WRITE) or decrypted (READ)."""
        if value is None:
            return None
        if ctx.rule_mode == RuleMode.WRITE:
            return self._encrypt(ctx, field_type, value)
        if ctx.rule_mode == RuleMode.READ:
            return self._decrypt(ctx, field_type, value)
        raise RuleError(f"encryption rules run on WRITE and READ, not {ctx.rule_mode}")

    def _encrypt(self, ctx: RuleContext, field_type: FieldType, value: Any) -> Any:
        if field_type == FieldType.STRING:
            plaintext = str(value).encode("utf-8")
        elif field_type == FieldType.BYTES:
            plaintext = _as_bytes(value)
        else:
            raise RuleError(f"type {field_type.value} not supported for encryption (only STRING and BYTES)")
        dek = self._dek_for_write(ctx)
        ciphertext = self._cryptor.encrypt(self._key_of(dek), plaintext)
        if self._rotating:
            assert dek.version is not None  # _dek_for_write checked it
            ciphertext = bytes([MAGIC_BYTE_V0]) + dek.version.to_bytes(4, "big") + ciphertext
        if field_type == FieldType.STRING:
            return base64.b64encode(ciphertext).decode("ascii")
        return ciphertext

    def _decrypt(self, ctx: RuleContext, field_type: FieldType, value: Any) -> Any:
        if field_type == FieldType.STRING:
            try:
                ciphertext = base64.b64decode(value)
            except (ValueError, TypeError) as e:
                raise RuleError(f"field of rule {ctx.rule.name!r} is not base64 ciphertext") from e
        elif field_type == FieldType.BYTES:
            ciphertext = _as_bytes(value)
        else:
            return value
        version = 1
        if self._rotating:
            if len(ciphertext) < _VERSION_HEADER or ciphertext[0] != MAGIC_BYTE_V0:
                raise RuleError("ciphertext of a rotated DEK does not start with its DEK version")
            version = int.from_bytes(ciphertext[1:_VERSION_HEADER], "big") or 1
            ciphertext = ciphertext[_VERSION_HEADER:]
        dek = self._dek_for_read(ctx, version)
        try:
            plaintext = self._cryptor.decrypt(self._key_of(dek), ciphertext)
        except CryptoError as e:
            raise RuleError(f"could not decrypt with DEK version {version} of KEK {self._kek_name}: {e}") from e
        if field_type == FieldType.STRING:
            try:
                return plaintext.decode("utf-8")
            except UnicodeDecodeError as e:
                raise RuleError("decrypted string field is not UTF-8") from e
        return plaintext

    # --- KEK and DEK -----------------------------------------------------------------------------

    def _client(self) -> DekRegistryClient:
        client = self._executor.client
        if client is None:
            raise RuleError("encryption executor not configured with a schema registry client configuration")
        return client

    def _subject(self, ctx: RuleContext) -> str:
        if not ctx.subject:
            raise RuleError("encryption rules need the record's subject")
        return ctx.subject

    def _get_kek(self, ctx: RuleContext) -> Kek:
        if self._kek is None:
            self._kek = self._find_or_register_kek(ctx)
        return self._kek

    def _find_or_register_kek(self, ctx: RuleContext) -> Kek:
        reading = ctx.rule_mode == RuleMode.READ
        kms_type = _param(ctx, ENCRYPT_KMS_TYPE)
        kms_key_id = _param(ctx, ENCRYPT_KMS_KEY_ID)
        context = context_for(ctx.subject)
        name = self._kek_name
        kek = self._lookup_kek(name, context)
        if kek is None:
            if reading:
                raise RuleError(f"no KEK {name} found to decrypt with")
            if kms_type is None or kms_key_id is None:
                missing = ENCRYPT_KMS_TYPE if kms_type is None else ENCRYPT_KMS_KEY_ID
                raise RuleError(f"KEK {name} is not registered and the rule has no {missing} to register it with")
            try:
                kek = self._client().register_kek(name, kms_type, kms_key_id, False, context=context)
            except SchemaRegistryError as e:
                if e.http_status_code != 409:
                    raise RuleError(f"could not register KEK {name}: {e}") from e
                kek = self._lookup_kek(name, context)  # registered meanwhile by another client
                if kek is None:
                    raise RuleError(f"KEK {name} conflicts but cannot be found") from e
        if kms_type is not None and kek.kms_type != kms_type:
            raise RuleError(f"KEK {name} has KMS type {kek.kms_type}, the rule {ENCRYPT_KMS_TYPE} {kms_type}")
        if kms_key_id is not None and kek.kms_key_id != kms_key_id:
            raise RuleError(f"KEK {name} has KMS key id {kek.kms_key_id}, the rule {ENCRYPT_KMS_KEY_ID} {kms_key_id}")
        return kek

    def _lookup_kek(self, name: str, context: str | None) -> Kek | None:
        try:
            return self._client().get_kek(name, False, context)
        except SchemaRegistryError as e:
            if e.http_status_code == 404:
                return None
            raise RuleError(f"could not get KEK {name}: {e}") from e

    def _lookup_dek(self, kek: Kek, subject: str, version: int, deleted: bool) -> Dek | None:
        try:
            return self._client().get_dek(kek.name or "", subject, self._algorithm, version, deleted)
        except SchemaRegistryError as e:
            if e.http_status_code == 404:
                return None
            raise RuleError(f"could not get a DEK of KEK {kek.name}, subject {subject}: {e}") from e

    def _expired(self, dek: Dek) -> bool:
        age = self._executor.clock.now() - (dek.ts or 0)
        return self._rotating and age > self._expiry_days * MILLIS_IN_DAY

    def _dek_for_write(self, ctx: RuleContext) -> Dek:
        kek = self._get_kek(ctx)
        subject = self._subject(ctx)
        wanted = LATEST if self._rotating else 1
        dek = self._lookup_dek(kek, subject, wanted, False)
        if dek is None or self._expired(dek):
            new_version = (dek.version or 0) + 1 if dek is not None else 1
            try:
                dek = self._create_dek(kek, subject, new_version, wanted)
            except RuleError as e:
                if dek is None:
                    raise
                log.warning("%s; encrypting with DEK version %s, which has expired", e, dek.version)
        if dek.version is None:
            raise RuleError(f"the DEK of KEK {kek.name}, subject {subject} has no version")
        self._unwrap(kek, dek)
        return dek

    def _create_dek(self, kek: Kek, subject: str, version: int, wanted: int) -> Dek:
        raw: bytes | None = None
        encrypted: str | None = None
        if not kek.shared:  # a shared KEK's registry makes the key itself
            raw = self._cryptor.generate_key()
            encrypted = base64.b64encode(self._aead(kek).encrypt(raw)).decode("ascii")
        algorithm = self._algorithm
        try:
            dek = self._client().register_dek(kek.name or "", subject, encrypted, algorithm, version)
        except SchemaRegistryError as e:
            if e.http_status_code != 409:
                raise RuleError(
                    f"could not register DEK version {version} of KEK {kek.name}, subject {subject}: {e}"
                ) from e
            found = self._lookup_dek(kek, subject, wanted, False)  # made meanwhile by another client
            if found is None:
                raise RuleError(f"DEK of KEK {kek.name}, subject {subject} conflicts but cannot be found") from e
            return found
        if raw is not None and dek.encrypted_key_material == encrypted:
            dek.set_key_material(raw)  # no need to ask the KMS for what we just wrapped
        return dek

    def _dek_for_read(self, ctx: RuleContext, version: int) -> Dek:
        kek = self._get_kek(ctx)
        subject = self._subject(ctx)
        dek = self._lookup_dek(kek, subject, version, True)
        if dek is None:
            raise RuleError(f"no DEK version {version} of KEK {kek.name}, subject {subject} found to decrypt with")
        self._unwrap(kek, dek)
        return dek

    def _unwrap(self, kek: Kek, dek: Dek) -> None:
        if dek.get_key_material_bytes() is not None:
            return
        encrypted = dek.get_encrypted_key_material_bytes()
        if encrypted is None:
            raise RuleError(f"DEK version {dek.version} of KEK {kek.name} has no key material")
        dek.set_key_material(self._aead(kek).decrypt(encrypted))

    def _aead(self, kek: Kek) -> AeadWrapper:
        return AeadWrapper(self._executor.config, kek, self._executor.kms_aead)

    @staticmethod
    def _key_of(dek: Dek) -> bytes:
        key = dek.get_key_material_bytes()
        assert key is not None  # _unwrap gave it
        return key


def _as_bytes(value: Any) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, io.BytesIO):
        return value.getvalue()
    raise RuleError(f"a BYTES field holds {type(value).__name__}, not bytes")


class FieldEncryptionExecutorTransform:
    """An ENCRYPT rule's transform of one record, as a field transform: each field by its type."""

    def __init__(self, executor_transform: EncryptionExecutorTransform) -> None:
        self.executor_transform = executor_transform

    def transform(self, ctx: RuleContext, field_ctx: FieldContext, field_value: Any) -> Any:
        return self.executor_transform.transform(ctx, field_ctx.field_type, field_value)


class FieldEncryptionExecutor(FieldRuleExecutor):
    """ENCRYPT: the STRING and BYTES fields the rule's tags select, encrypted on write and
    decrypted on read. ``executor`` is the EncryptionExecutor doing the work."""

    def __init__(self, clock: Clock | None = None) -> None:
        self.executor = EncryptionExecutor(clock)

    def configure(self, client_conf: dict[str, Any], rule_conf: dict[str, Any]) -> None:
        self.executor.configure(client_conf, rule_conf)

    def type(self) -> str:
        return "ENCRYPT"

    def new_transform(self, ctx: RuleContext) -> FieldTransform:
        return FieldTransform(FieldEncryptionExecutorTransform(self.executor.new_transform(ctx)).transform)

    def close(self) -> None:
        self.executor.close()

    @classmethod
    def register(cls) -> FieldEncryptionExecutor:
        return cls.register_with_clock(Clock())

    @classmethod
    def register_with_clock(cls, clock: Clock) -> FieldEncryptionExecutor:
        executor = cls(clock)
        RuleRegistry.register_rule_executor(executor)
        return executor
