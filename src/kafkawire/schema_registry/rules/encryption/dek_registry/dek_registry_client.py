"""DekRegistryClient: the KEKs and DEKs a Schema Registry keeps (``/dek-registry/v1/keks...``).

A KEK (key encryption key) names a key in a KMS; a DEK (data encryption key) is a Tink key for
one subject, stored wrapped by its KEK (``encryptedKeyMaterial``), in numbered versions when it
is rotated. KEKs and DEK versions do not change once registered, so they are cached for good;
the latest version (-1) is cached until this client registers a new one.
"""

from __future__ import annotations

import base64
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any, Protocol

from ...._sync.schema_registry_client import _RestClient, _urlencode
from ....error import SchemaRegistryError

__all__ = [
    "CreateDekRequest",
    "CreateKekRequest",
    "Dek",
    "DekAlgorithm",
    "DekId",
    "DekRegistryClient",
    "Kek",
    "KekId",
    "KekKmsProps",
    "context_for",
]

LATEST = -1
_KEKS = "/dek-registry/v1/keks"


class DekAlgorithm(str, Enum):
    """A DEK's Tink key type: AES-GCM (random nonce) or AES-SIV (deterministic)."""

    AES128_GCM = "AES128_GCM"
    AES256_GCM = "AES256_GCM"
    AES256_SIV = "AES256_SIV"

    def __str__(self) -> str:
        return self.value


@dataclass
class KekKmsProps:
    """The KMS settings stored with a KEK (region, credentials profile, alternate key ids...)."""

    properties: dict[str, str] = field(default_factory=dict, repr=False)  # may hold KMS credentials

    def to_dict(self) -> dict[str, str]:
        return dict(self.properties)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> KekKmsProps:
        return cls({str(k): str(v) for k, v in d.items()})


@dataclass
class Kek:
    """A key encryption key: ``kms_type`` (``aws-kms``, ``local-kms``...) and the KMS's key id.
    A ``shared`` KEK lets the registry itself create and unwrap its DEKs."""

    name: str | None
    kms_type: str | None
    kms_key_id: str | None
    kms_props: KekKmsProps | None
    doc: str | None
    shared: bool | None
    ts: int | None = None
    deleted: bool | None = None

    def to_dict(self) -> dict[str, Any]:
        d = {
            "name": self.name,
            "kmsType": self.kms_type,
            "kmsKeyId": self.kms_key_id,
            "kmsProps": None if self.kms_props is None else self.kms_props.to_dict(),
            "doc": self.doc,
            "shared": self.shared,
            "ts": self.ts,
            "deleted": self.deleted,
        }
        return {k: v for k, v in d.items() if v is not None}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Kek:
        props = d.get("kmsProps")
        return cls(
            name=d.get("name"),
            kms_type=d.get("kmsType"),
            kms_key_id=d.get("kmsKeyId"),
            kms_props=None if props is None else KekKmsProps.from_dict(props),
            doc=d.get("doc"),
            shared=d.get("shared"),
            ts=d.get("ts"),
            deleted=d.get("deleted"),
        )


@dataclass
class Dek:
    """A data encryption key version. ``encrypted_key_material`` is the Tink key wrapped by the
    KEK (base64); ``key_material`` the plain key (base64), given by the registry for shared KEKs
    or set by the executor once it unwrapped the key."""

    kek_name: str | None
    subject: str | None
    version: int | None
    algorithm: DekAlgorithm | None
    encrypted_key_material: str | None
    key_material: str | None = field(default=None, repr=False)
    ts: int | None = None
    deleted: bool | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False, compare=False)
    _plain: bytes | None = field(default=None, init=False, repr=False, compare=False)

    def get_encrypted_key_material_bytes(self) -> bytes | None:
        if self.encrypted_key_material is None:
            return None
        return base64.b64decode(self.encrypted_key_material)

    def get_key_material_bytes(self) -> bytes | None:
        with self._lock:
            if self._plain is None and self.key_material is not None:
                self._plain = base64.b64decode(self.key_material)
            return self._plain

    def set_key_material(self, key_material_bytes: bytes | None) -> None:
        with self._lock:
            self._plain = key_material_bytes
            self.key_material = None if key_material_bytes is None else base64.b64encode(key_material_bytes).decode()

    def to_dict(self) -> dict[str, Any]:
        d = {
            "kekName": self.kek_name,
            "subject": self.subject,
            "version": self.version,
            "algorithm": None if self.algorithm is None else self.algorithm.value,
            "encryptedKeyMaterial": self.encrypted_key_material,
            "keyMaterial": self.key_material,
            "ts": self.ts,
            "deleted": self.deleted,
        }
        return {k: v for k, v in d.items() if v is not None}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Dek:
        algorithm = d.get("algorithm")
        return cls(
            kek_name=d.get("kekName"),
            subject=d.get("subject"),
            version=d.get("version"),
            algorithm=None if algorithm is None else DekAlgorithm(algorithm),
            encrypted_key_material=d.get("encryptedKeyMaterial"),
            key_material=d.get("keyMaterial"),
            ts=d.get("ts"),
            deleted=d.get("deleted"),
        )


def _present(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None}


@dataclass
class CreateKekRequest:
    """The body of a KEK registration (a `Kek` before the registry stamps it)."""

    name: str | None
    kms_type: str | None
    kms_key_id: str | None
    kms_props: KekKmsProps | None
    doc: str | None
    shared: bool | None

    def to_dict(self) -> dict[str, Any]:
        props = None if self.kms_props is None else self.kms_props.to_dict()
        return _present(
            {
                "name": self.name,
                "kmsType": self.kms_type,
                "kmsKeyId": self.kms_key_id,
                "kmsProps": props,
                "doc": self.doc,
                "shared": self.shared,
            }
        )

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> CreateKekRequest:
        props = d.get("kmsProps")
        return cls(
            d.get("name"),
            d.get("kmsType"),
            d.get("kmsKeyId"),
            None if props is None else KekKmsProps.from_dict(props),
            d.get("doc"),
            d.get("shared"),
        )


@dataclass
class CreateDekRequest:
    """The body of a DEK registration: ``encrypted_key_material`` None under a shared KEK."""

    subject: str | None
    version: int | None
    algorithm: DekAlgorithm | None
    encrypted_key_material: str | None

    def to_dict(self) -> dict[str, Any]:
        algorithm = None if self.algorithm is None else self.algorithm.value
        return _present(
            {
                "subject": self.subject,
                "version": self.version,
                "algorithm": algorithm,
                "encryptedKeyMaterial": self.encrypted_key_material,
            }
        )

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> CreateDekRequest:
        algorithm = d.get("algorithm")
        return cls(
            d.get("subject"),
            d.get("version"),
            None if algorithm is None else DekAlgorithm(algorithm),
            d.get("encryptedKeyMaterial"),
        )


@dataclass(frozen=True)
class KekId:
    name: str
    deleted: bool
    context: str | None = None


@dataclass(frozen=True)
class DekId:
    kek_name: str
    subject: str
    version: int
    algorithm: DekAlgorithm
    deleted: bool


def context_for(subject: str | None) -> str | None:
    """The registry context of a qualified subject (``:.ctx:name`` -> ``.ctx``); None for an
    unqualified subject or the default context ``:.:name``. KEKs live in a context."""
    if subject is None or not subject.startswith(":."):
        return None
    end = subject.find(":", 2)
    context = subject[1:] if end < 0 else subject[1:end]
    return None if context == "." else context


class _Backend(Protocol):
    """Where requests go: the registry's REST API, or the in-process store of mock:// URLs."""

    def create_kek(self, body: dict[str, Any], context: str | None) -> dict[str, Any]: ...

    def read_kek(self, name: str, deleted: bool, context: str | None) -> dict[str, Any]: ...

    def create_dek(self, kek_name: str, subject: str, body: dict[str, Any]) -> dict[str, Any]: ...

    def read_dek(
        self, kek_name: str, subject: str, version: int, algorithm: DekAlgorithm, deleted: bool
    ) -> dict[str, Any]: ...

    def close(self) -> None: ...


class _RestBackend:
    def __init__(self, conf: dict[str, Any]) -> None:
        self._rest = _RestClient(conf)

    def create_kek(self, body: dict[str, Any], context: str | None) -> dict[str, Any]:
        result: dict[str, Any] = self._rest.post(_KEKS, body, {"context": context})
        return result

    def read_kek(self, name: str, deleted: bool, context: str | None) -> dict[str, Any]:
        result: dict[str, Any] = self._rest.get(f"{_KEKS}/{_urlencode(name)}", {"deleted": deleted, "context": context})
        return result

    def create_dek(self, kek_name: str, subject: str, body: dict[str, Any]) -> dict[str, Any]:
        try:
            result: dict[str, Any] = self._rest.post(f"{_KEKS}/{_urlencode(kek_name)}/deks/{_urlencode(subject)}", body)
        except SchemaRegistryError as e:
            if e.http_status_code != 405:
                raise
            # Registries before the subject moved into the path take it from the body only.
            result = self._rest.post(f"{_KEKS}/{_urlencode(kek_name)}/deks", body)
        return result

    def read_dek(
        self, kek_name: str, subject: str, version: int, algorithm: DekAlgorithm, deleted: bool
    ) -> dict[str, Any]:
        path = f"{_KEKS}/{_urlencode(kek_name)}/deks/{_urlencode(subject)}/versions/{version}"
        result: dict[str, Any] = self._rest.get(path, {"algorithm": algorithm.value, "deleted": deleted})
        return result

    def close(self) -> None:
        self._rest.close()


# URL schemes served in process ("mock"), filled in by the modules serving them (imported by this
# package), so this module does not import them back.
IN_PROCESS: dict[str, Callable[[dict[str, Any]], DekRegistryClient]] = {}


class DekRegistryClient:
    """A client of a Schema Registry's DEK registry, configured like ``SchemaRegistryClient``.

    ``DekRegistryClient.new_client({"url": "mock://..."})`` gives the in-process registry.
    """

    def __init__(self, conf: dict[str, Any], backend: _Backend | None = None) -> None:
        self._conf = dict(conf)
        self._backend: _Backend = backend if backend is not None else _RestBackend(self._conf)
        self._lock = threading.Lock()
        self._keks: dict[KekId, Kek] = {}
        self._deks: dict[DekId, Dek] = {}

    @staticmethod
    def new_client(conf: dict[str, Any]) -> DekRegistryClient:
        """A client for ``conf``; a ``mock://`` url (or none) gives the in-process registry."""
        url = conf.get("url", "mock://")
        scheme = url.split("://", 1)[0] if isinstance(url, str) and "://" in url else ""
        return IN_PROCESS.get(scheme, DekRegistryClient)(conf)

    def config(self) -> dict[str, Any]:
        return self._conf

    def __enter__(self) -> DekRegistryClient:
        return self

    def __exit__(self, *args: Any) -> None:
        self.close()

    def close(self) -> None:
        self._backend.close()

    def register_kek(
        self,
        name: str,
        kms_type: str,
        kms_key_id: str,
        shared: bool = False,
        kms_props: dict[str, str] | None = None,
        doc: str | None = None,
        context: str | None = None,
    ) -> Kek:
        """Registers a KEK (in registry ``context``, the default one when None)."""
        key = KekId(name, False, context)
        with self._lock:
            hit = self._keks.get(key)
        if hit is not None:
            return hit
        props = None if kms_props is None else KekKmsProps(dict(kms_props))
        body = CreateKekRequest(name, kms_type, kms_key_id, props, doc, shared).to_dict()
        kek = Kek.from_dict(self._backend.create_kek(body, context))
        with self._lock:
            self._keks[key] = kek
        return kek

    def get_kek(self, name: str, deleted: bool = False, context: str | None = None) -> Kek:
        """The KEK ``name`` (``deleted``: soft-deleted ones too); 404 when there is none."""
        key = KekId(name, deleted, context)
        with self._lock:
            hit = self._keks.get(key)
        if hit is not None:
            return hit
        kek = Kek.from_dict(self._backend.read_kek(name, deleted, context))
        with self._lock:
            self._keks[key] = kek
        return kek

    def register_dek(
        self,
        kek_name: str,
        subject: str,
        encrypted_key_material: str | None,
        algorithm: DekAlgorithm = DekAlgorithm.AES256_GCM,
        version: int = 1,
    ) -> Dek:
        """Registers a DEK version for ``subject`` (``encrypted_key_material``: base64 of the
        wrapped key; None under a shared KEK, whose registry makes the key); 409 when it exists."""
        key = DekId(kek_name, subject, version, algorithm, False)
        with self._lock:
            hit = self._deks.get(key)
        if hit is not None:
            return hit
        body = CreateDekRequest(subject, version, algorithm, encrypted_key_material).to_dict()
        try:
            dek = Dek.from_dict(self._backend.create_dek(kek_name, subject, body))
        finally:
            # Registered here or (on a conflict) elsewhere: the latest version may have changed.
            self._forget_latest(kek_name, subject, algorithm)
        with self._lock:
            self._deks[key] = dek
        return dek

    def get_dek(
        self,
        kek_name: str,
        subject: str,
        algorithm: DekAlgorithm = DekAlgorithm.AES256_GCM,
        version: int = 1,
        deleted: bool = False,
    ) -> Dek:
        """DEK ``version`` of ``subject`` (-1: the latest); 404 when there is none."""
        key = DekId(kek_name, subject, version, algorithm, deleted)
        with self._lock:
            hit = self._deks.get(key)
        if hit is not None:
            return hit
        dek = Dek.from_dict(self._backend.read_dek(kek_name, subject, version, algorithm, deleted))
        with self._lock:
            if version == LATEST and dek.version is not None:
                # One object per version, so a key unwrapped once is unwrapped for both lookups.
                dek = self._deks.setdefault(replace(key, version=dek.version), dek)
            self._deks[key] = dek
        return dek

    def get_dek_latest_version(
        self, kek_name: str, subject: str, algorithm: DekAlgorithm = DekAlgorithm.AES256_GCM, deleted: bool = False
    ) -> Dek:
        return self.get_dek(kek_name, subject, algorithm, LATEST, deleted)

    def _forget_latest(self, kek_name: str, subject: str, algorithm: DekAlgorithm) -> None:
        with self._lock:
            for deleted in (False, True):
                self._deks.pop(DekId(kek_name, subject, LATEST, algorithm, deleted), None)
