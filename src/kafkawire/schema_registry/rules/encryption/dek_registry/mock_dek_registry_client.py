"""MockDekRegistryClient: the DEK registry in process, for ``mock://`` URLs.

Every client of one URL shares one store for the life of the process, as the mock schema
registry does, so a test's serializer and deserializer find the same keys. It answers as the
registry does (the same JSON, 404 and 409 errors); under a shared KEK it makes the DEK itself,
keeping the key material in the clear, since it holds no KMS credentials to wrap it.
"""

from __future__ import annotations

import base64
import copy
import threading
import time
from typing import Any

from ....error import SchemaRegistryError
from ..cryptor import Cryptor
from .dek_registry_client import IN_PROCESS, LATEST, DekAlgorithm, DekRegistryClient, context_for
from .dek_registry_client import Dek as Dek
from .dek_registry_client import DekId as DekId
from .dek_registry_client import Kek as Kek
from .dek_registry_client import KekId as KekId
from .dek_registry_client import KekKmsProps as KekKmsProps

__all__ = ["MockDekRegistryClient"]

# The registry's error codes: key not found, key already exists, invalid key.
_NOT_FOUND = 40470
_EXISTS = 40971
_INVALID = 42271


def _now_ms() -> int:
    return int(time.time() * 1000)


class _Store:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.keks: dict[tuple[str, str | None], dict[str, Any]] = {}  # (name, context)
        self.deks: dict[tuple[str, str, DekAlgorithm, int], dict[str, Any]] = {}  # (kek, subject, alg, version)


_STORES: dict[str, _Store] = {}
_STORES_LOCK = threading.Lock()
_KEK_FIELDS = ("kmsType", "kmsKeyId", "kmsProps", "doc", "shared")


class _MockBackend:
    def __init__(self, store: _Store) -> None:
        self._store = store

    def create_kek(self, body: dict[str, Any], context: str | None) -> dict[str, Any]:
        name = str(body.get("name"))
        wanted = {"shared": False, **body}
        with self._store.lock:
            kek = self._store.keks.get((name, context))
            if kek is not None:
                if any(kek.get(f) != wanted.get(f) for f in _KEK_FIELDS):
                    raise SchemaRegistryError(409, _EXISTS, f"Key '{name}' already exists")
                return copy.deepcopy(kek)
            kek = {**wanted, "ts": _now_ms(), "deleted": False}
            self._store.keks[(name, context)] = kek
            return copy.deepcopy(kek)

    def read_kek(self, name: str, deleted: bool, context: str | None) -> dict[str, Any]:
        with self._store.lock:
            kek = self._store.keks.get((name, context))
        if kek is None:
            raise SchemaRegistryError(404, _NOT_FOUND, f"Key '{name}' not found")
        return copy.deepcopy(kek)

    def create_dek(self, kek_name: str, subject: str, body: dict[str, Any]) -> dict[str, Any]:
        algorithm = DekAlgorithm(body.get("algorithm", DekAlgorithm.AES256_GCM.value))
        version = int(body.get("version", 1))
        encrypted = body.get("encryptedKeyMaterial")
        kek = self.read_kek(kek_name, False, context_for(subject))
        with self._store.lock:
            key = (kek_name, subject, algorithm, version)
            dek = self._store.deks.get(key)
            if dek is not None:
                if encrypted is None or dek.get("encryptedKeyMaterial") != encrypted:
                    raise SchemaRegistryError(409, _EXISTS, f"Key '{kek_name}' for subject '{subject}' already exists")
                return dict(dek)
            dek = {"kekName": kek_name, "subject": subject, "version": version, "algorithm": algorithm.value}
            if encrypted is not None:
                dek["encryptedKeyMaterial"] = encrypted
            elif kek.get("shared"):
                dek["keyMaterial"] = base64.b64encode(Cryptor(algorithm).generate_key()).decode()
            else:
                raise SchemaRegistryError(
                    422, _INVALID, f"encryptedKeyMaterial is required: KEK {kek_name} is not shared"
                )
            dek.update(ts=_now_ms(), deleted=False)
            self._store.deks[key] = dek
            return dict(dek)

    def read_dek(
        self, kek_name: str, subject: str, version: int, algorithm: DekAlgorithm, deleted: bool
    ) -> dict[str, Any]:
        with self._store.lock:
            if version == LATEST:
                versions = [v for (k, s, a, v) in self._store.deks if (k, s, a) == (kek_name, subject, algorithm)]
                version = max(versions, default=0)
            dek = self._store.deks.get((kek_name, subject, algorithm, version))
        if dek is None:
            raise SchemaRegistryError(404, _NOT_FOUND, f"Key '{kek_name}' for subject '{subject}' not found")
        return dict(dek)

    def close(self) -> None:
        """Nothing to release: the store outlives its clients."""


class MockDekRegistryClient(DekRegistryClient):
    """A DEK registry in memory, shared by every client of the same ``mock://`` URL."""

    def __init__(self, conf: dict[str, Any]) -> None:
        url = str(conf.get("url", "mock://"))
        with _STORES_LOCK:
            store = _STORES.setdefault(url, _Store())
        super().__init__(conf, _MockBackend(store))


IN_PROCESS["mock"] = MockDekRegistryClient
