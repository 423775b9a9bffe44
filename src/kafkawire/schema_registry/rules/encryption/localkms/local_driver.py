"""The local KMS driver (``local-kms://``): the KEK is derived from a secret, not held by a KMS.

For development and tests: every local-kms key id of one secret is the same key, and anyone with
the secret can unwrap the DEKs. The secret comes from the rule configuration (``secret``) or the
``LOCAL_SECRET`` environment variable and never appears in an error, log or repr.
"""

from __future__ import annotations

import os
from typing import Any

import tink  # type: ignore[import-untyped]

from ....common.serde import RuleError
from ..cryptor import local_kms_aead
from ..kms_driver_registry import Aead, KmsDriver, register_kms_driver

__all__ = ["LocalKmsClient", "LocalKmsDriver"]

PREFIX = "local-kms://"
SECRET = "secret"
SECRET_ENV = "LOCAL_SECRET"


class LocalKmsClient(tink.KmsClient):  # type: ignore[misc]
    """The one AEAD of a secret, whatever the key id."""

    def __init__(self, secret: str | None = None) -> None:
        if secret is None:
            raise TypeError("secret cannot be None")  # confluent-kafka's refusal
        self._aead = local_kms_aead(secret)

    def does_support(self, key_uri: str) -> bool:
        return key_uri.startswith(PREFIX)

    def get_aead(self, key_uri: str) -> Aead:
        if not key_uri.startswith(PREFIX):
            raise RuleError(f"the local KMS serves {PREFIX} keys, not {key_uri.split('://', 1)[0]}://")
        return self._aead


class LocalKmsDriver(KmsDriver):
    def get_key_url_prefix(self) -> str:
        return PREFIX

    def new_kms_client(self, conf: dict[str, Any], key_url: str | None) -> LocalKmsClient:
        secret = conf.get(SECRET)
        if secret is None:
            secret = os.environ.get(SECRET_ENV)
        if not secret:
            raise RuleError(f"local-kms: no secret; set '{SECRET}' in the rule configuration or {SECRET_ENV}")
        if not isinstance(secret, str):
            raise RuleError(f"local-kms: '{SECRET}' must be a str, not {type(secret).__name__}")
        return LocalKmsClient(secret)

    @classmethod
    def register(cls) -> LocalKmsDriver:
        driver = cls()
        register_kms_driver(driver)
        return driver
