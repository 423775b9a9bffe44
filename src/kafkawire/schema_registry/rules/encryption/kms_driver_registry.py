"""Which KMS wraps a KEK's DEKs: drivers registered by the key URL prefix they serve.

A KEK names its KMS (``kms_type``) and key (``kms_key_id``); the executor joins them into a key
URL (``aws-kms://arn:...``, ``local-kms://mykey``) and asks the driver of that prefix for a client.
Drivers are registered explicitly (``LocalKmsDriver.register()``, ...), so a process only loads
the cloud SDKs it asked for.
"""

from __future__ import annotations

import importlib
import os
import threading
from abc import ABC, abstractmethod
from types import ModuleType
from typing import Any, Protocol

from ...common.serde import RuleError

__all__ = [
    "Aead",
    "KmsClient",
    "KmsDriver",
    "conf_or_env",
    "get_kms_driver",
    "import_sdk",
    "register_kms_driver",
    "reset_kms_drivers",
]


class Aead(Protocol):
    """Authenticated encryption with associated data (Tink's ``aead.Aead`` has this shape)."""

    def encrypt(self, plaintext: bytes, associated_data: bytes) -> bytes: ...

    def decrypt(self, ciphertext: bytes, associated_data: bytes) -> bytes: ...


class KmsClient(Protocol):
    """A KMS connection: the AEAD of one of its keys (Tink's ``KmsClient`` has this shape)."""

    def get_aead(self, key_uri: str) -> Aead: ...


class KmsDriver(ABC):
    """Makes KMS clients for the key URLs starting with ``get_key_url_prefix()``."""

    @abstractmethod
    def get_key_url_prefix(self) -> str: ...

    @abstractmethod
    def new_kms_client(self, conf: dict[str, Any], key_url: str | None) -> KmsClient:
        """A client for ``key_url`` configured by ``conf``: the serde's rule_conf with the KEK's
        ``kmsProps`` over it."""


_drivers: dict[str, KmsDriver] = {}
_lock = threading.Lock()


def register_kms_driver(driver: KmsDriver) -> None:
    """Registers ``driver`` for its prefix (replacing an earlier driver of that prefix, so
    registering again, as test fixtures do, is harmless)."""
    with _lock:
        _drivers[driver.get_key_url_prefix()] = driver


def get_kms_driver(key_url: str) -> KmsDriver:
    """The driver serving ``key_url`` (the longest matching prefix)."""
    with _lock:
        matches = [prefix for prefix in _drivers if key_url.startswith(prefix)]
        if matches:
            return _drivers[max(matches, key=len)]
    scheme = key_url.split("://", 1)[0]
    raise RuleError(f"no KMS driver registered for {scheme}:// keys (register one, e.g. LocalKmsDriver.register())")


def reset_kms_drivers() -> None:
    """Forget every registered driver (tests start from none)."""
    with _lock:
        _drivers.clear()


def import_sdk(module: str, extra: str) -> ModuleType:
    """Imports a cloud SDK module when a client is made, naming the extra that installs it. The
    error is the ModuleNotFoundError confluent-kafka's driver modules raise on import without
    their SDK (with the missing module's ``name``), met here at first use instead: registering a
    driver imports no SDK."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise ModuleNotFoundError(f"{module} is not installed: pip install kafkawire[{extra}]", name=e.name) from e


def conf_or_env(conf: dict[str, Any], key: str, env: str | None = None) -> str | None:
    """A driver setting: the rule configuration's ``key``, else the environment variable ``env``."""
    value = conf.get(key)
    if value is None and env is not None:
        value = os.environ.get(env)
    return None if value is None or value == "" else str(value)
