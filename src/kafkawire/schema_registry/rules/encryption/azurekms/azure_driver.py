"""The Azure Key Vault KMS driver: key URLs ``azure-kms://https://VAULT.vault.azure.net/keys/NAME[/VERSION]``.

Its clients (`azure_client`) wrap DEKs with the vault's RSA-OAEP-256, credentials and key ids as
`key_vault` reads them. The SDK is imported when a client is made, not with this module, so
registering the driver costs nothing where no Azure key is used: ``pip install kafkawire[kms-azure]``
brings it.
"""

from __future__ import annotations

from typing import Any

from ..kms_driver_registry import KmsDriver, register_kms_driver
from .azure_client import AzureKmsClient
from .key_vault import ENCRYPT_AZURE_KEY_VERSION_SAVE as ENCRYPT_AZURE_KEY_VERSION_SAVE
from .key_vault import PREFIX, credentials
from .key_vault import get_versioned_key_id as get_versioned_key_id
from .key_vault import is_versionless as is_versionless
from .key_vault import with_version as with_version

__all__ = ["ENCRYPT_AZURE_KEY_VERSION_SAVE", "AzureKmsDriver", "get_versioned_key_id", "is_versionless", "with_version"]


class AzureKmsDriver(KmsDriver):
    def get_key_url_prefix(self) -> str:
        return PREFIX

    def new_kms_client(self, conf: dict[str, Any], key_url: str | None) -> AzureKmsClient:
        return AzureKmsClient(key_url if key_url is not None else PREFIX, credentials(conf), conf)

    @classmethod
    def register(cls) -> AzureKmsDriver:
        driver = cls()
        register_kms_driver(driver)
        return driver
