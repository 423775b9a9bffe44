"""The Tink KMS client of one Azure Key Vault key (``azure-kms://https://VAULT/keys/NAME[/VERSION]``).

Its AEAD wraps DEKs with RSA-OAEP-256 through the SDK's ``CryptographyClient`` (imported when an
AEAD is made: ``pip install kafkawire[kms-azure]``). With ``encrypt.azure.key.version.save`` set to
true in the configuration, a versionless key's current version is asked of the vault at the first
wrap and saved with the DEK (see `azure_aead`).
"""

from __future__ import annotations

import logging
from typing import Any

import tink  # type: ignore[import-untyped]

from ..bound_kms_client import BoundKmsClient
from ..kms_driver_registry import import_sdk
from . import key_vault
from .azure_aead import AzureKmsAead

__all__ = ["AZURE_KEYURI_PREFIX", "AzureKmsClient"]

AZURE_KEYURI_PREFIX = "azure-kms://"

log = logging.getLogger(__name__)


class AzureKmsClient(BoundKmsClient):
    """Bound to ``key_uri``; ``credentials`` is an azure-identity credential."""

    prefix = AZURE_KEYURI_PREFIX

    def __init__(self, key_uri: str, credentials: Any, conf: dict[str, Any] | None = None) -> None:
        if not key_uri.startswith(AZURE_KEYURI_PREFIX):
            raise tink.TinkError("Invalid key_uri.")
        self._key_uri = key_uri
        self._credentials = credentials
        self._conf = conf if conf is not None else {}

    def get_aead(self, key_uri: str) -> AzureKmsAead:
        key_id = self._key_id(key_uri)
        crypto = import_sdk("azure.keyvault.keys.crypto", key_vault.EXTRA)
        save = str(self._conf.get(key_vault.ENCRYPT_AZURE_KEY_VERSION_SAVE, False)).lower() == "true"
        if not save:
            try:
                versionless = key_vault.is_versionless(key_id)
            except tink.TinkError:
                versionless = False  # a malformed id fails where it is used
            if versionless:
                log.warning(
                    "Azure Key Vault key '%s' is versionless and %s is not enabled; DEKs wrapped with it may "
                    "become undecryptable after the key is rotated.",
                    key_id,
                    key_vault.ENCRYPT_AZURE_KEY_VERSION_SAVE,
                )

        def client_of(version: str) -> Any:
            return crypto.CryptographyClient(key_vault.with_version(key_id, version), self._credentials)

        def current() -> tuple[Any, str]:
            """The key's version now (asked of the vault only for a versionless key id)."""
            version = key_vault.get_versioned_key_id(self._conf, key_id).rsplit("/", 1)[-1]
            return client_of(version), version

        default = crypto.CryptographyClient(key_id, self._credentials)
        algorithm = crypto.EncryptionAlgorithm.rsa_oaep_256
        return AzureKmsAead(default, algorithm, current if save else None, client_of)
