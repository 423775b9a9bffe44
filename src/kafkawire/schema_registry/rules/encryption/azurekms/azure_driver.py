"""The Azure Key Vault driver (``azure-kms://https://VAULT.vault.azure.net/keys/NAME[/VERSION]``).

DEKs are wrapped with RSA-OAEP-256. Credentials: ``tenant.id``, ``client.id`` and
``client.secret`` (a service principal), else azure-identity's default chain.

Key Vault does not say which key version wrapped a DEK, so after the key is rotated a DEK wrapped
through a versionless key id could no longer be unwrapped. With ``encrypt.azure.key.version.save``
set to true, the wrapped DEK carries the version: ``azure:v1:`` + the 32-hex-digit version + ``:``
+ the RSA ciphertext; such DEKs are always unwrapped with the version they name. The SDK is
imported only when a client is made: ``pip install kafkawire[kms-azure]``.
"""

from __future__ import annotations

import string
import urllib.parse
from dataclasses import dataclass, field
from typing import Any

from ....common.serde import RuleError
from ..kms_driver_registry import Aead, KmsDriver, conf_or_env, import_sdk, register_kms_driver

__all__ = ["AzureKmsDriver", "AzureSettings", "azure_settings"]

PREFIX = "azure-kms://"
EXTRA = "kms-azure"
TENANT_ID = "tenant.id"
CLIENT_ID = "client.id"
CLIENT_SECRET = "client.secret"
ENCRYPT_AZURE_KEY_VERSION_SAVE = "encrypt.azure.key.version.save"

_VERSION_TAG = b"azure:v1:"
_VERSION_LENGTH = 32
_HEADER = len(_VERSION_TAG) + _VERSION_LENGTH + 1


@dataclass(frozen=True)
class AzureSettings:
    """What a client of one key is made from."""

    vault_url: str
    key_name: str
    key_version: str | None
    tenant_id: str | None
    client_id: str | None
    client_secret: str | None = field(repr=False)
    save_version: bool

    def key_id(self, version: str | None) -> str:
        return f"{self.vault_url}/keys/{self.key_name}" + (f"/{version}" if version else "")


def azure_settings(conf: dict[str, Any], key_url: str | None) -> AzureSettings:
    """The driver's settings for ``key_url``; a key id that is not a vault key URL is refused."""
    if key_url is None or not key_url.startswith(PREFIX):
        raise RuleError(f"an Azure Key Vault key URL starts with {PREFIX}")
    key_id = key_url[len(PREFIX) :]
    parts = urllib.parse.urlsplit(key_id)
    segments = [s for s in parts.path.split("/") if s]
    if not parts.scheme or not parts.netloc or len(segments) not in (2, 3) or segments[0] != "keys":
        raise RuleError(f"{key_id!r} is not an Azure Key Vault key id (https://VAULT/keys/NAME[/VERSION])")
    principal = {k: conf_or_env(conf, k) for k in (TENANT_ID, CLIENT_ID, CLIENT_SECRET)}
    given = [k for k, v in principal.items() if v is not None]
    if given and len(given) < len(principal):
        missing = ", ".join(k for k, v in principal.items() if v is None)
        raise RuleError(f"azure-kms: a service principal also needs {missing}")
    return AzureSettings(
        vault_url=f"{parts.scheme}://{parts.netloc}",
        key_name=segments[1],
        key_version=segments[2] if len(segments) == 3 else None,
        tenant_id=principal[TENANT_ID],
        client_id=principal[CLIENT_ID],
        client_secret=principal[CLIENT_SECRET],
        save_version=str(conf.get(ENCRYPT_AZURE_KEY_VERSION_SAVE, "false")).lower() == "true",
    )


def _check_version(version: str) -> str:
    """A version goes into a key URL, and one read from a wrapped DEK is unauthenticated."""
    if len(version) != _VERSION_LENGTH or any(c not in string.hexdigits for c in version):
        raise RuleError(f"Azure key version {version!r} is not {_VERSION_LENGTH} hex digits")
    return version


class AzureKmsClient:
    """One vault key (the only key URL it serves), and its AEAD: Key Vault takes no associated
    data, so DEKs are wrapped with none."""

    def __init__(self, settings: AzureSettings, key_url: str) -> None:
        self._settings = settings
        self._key_url = key_url
        identity = import_sdk("azure.identity", EXTRA)
        self._crypto = import_sdk("azure.keyvault.keys.crypto", EXTRA)
        self._keys = import_sdk("azure.keyvault.keys", EXTRA)
        if settings.tenant_id is not None:
            self._credential = identity.ClientSecretCredential(
                settings.tenant_id, settings.client_id, settings.client_secret
            )
        else:
            self._credential = identity.DefaultAzureCredential()

    def get_aead(self, key_uri: str) -> Aead:
        if key_uri != self._key_url:
            raise RuleError(f"this Azure KMS client serves {self._key_url}, not {key_uri}")
        return self

    def encrypt(self, plaintext: bytes, associated_data: bytes) -> bytes:
        settings = self._settings
        version = settings.key_version
        if not settings.save_version:
            wrapped: bytes = self._client(version).encrypt(self._algorithm(), plaintext).ciphertext
            return wrapped
        if version is None:
            key = self._keys.KeyClient(vault_url=settings.vault_url, credential=self._credential).get_key(
                settings.key_name
            )
            version = str(key.properties.version)
        version = _check_version(version)
        wrapped = self._client(version).encrypt(self._algorithm(), plaintext).ciphertext
        return _VERSION_TAG + version.encode("ascii") + b":" + wrapped

    def decrypt(self, ciphertext: bytes, associated_data: bytes) -> bytes:
        version = self._settings.key_version
        if ciphertext.startswith(_VERSION_TAG) and len(ciphertext) > _HEADER and ciphertext[_HEADER - 1] == ord(":"):
            version = _check_version(ciphertext[len(_VERSION_TAG) : _HEADER - 1].decode("ascii", "replace"))
            ciphertext = ciphertext[_HEADER:]
        plaintext: bytes = self._client(version).decrypt(self._algorithm(), ciphertext).plaintext
        return plaintext

    def _client(self, version: str | None) -> Any:
        return self._crypto.CryptographyClient(self._settings.key_id(version), self._credential)

    def _algorithm(self) -> Any:
        return self._crypto.EncryptionAlgorithm.rsa_oaep_256


class AzureKmsDriver(KmsDriver):
    def get_key_url_prefix(self) -> str:
        return PREFIX

    def new_kms_client(self, conf: dict[str, Any], key_url: str | None) -> AzureKmsClient:
        settings = azure_settings(conf, key_url)
        assert key_url is not None  # azure_settings checked it
        return AzureKmsClient(settings, key_url)

    @classmethod
    def register(cls) -> AzureKmsDriver:
        driver = cls()
        register_kms_driver(driver)
        return driver
