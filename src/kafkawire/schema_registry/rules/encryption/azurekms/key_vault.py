"""Azure Key Vault key ids and credentials, as the Azure KMS driver reads them from its configuration.

A key id is ``https://VAULT.vault.azure.net/keys/NAME[/VERSION]``. Credentials: ``tenant.id``,
``client.id`` and ``client.secret`` (a service principal; half of one is refused), else
azure-identity's default chain. The SDK is imported only when a credential or key client is made:
``pip install kafkawire[kms-azure]``.
"""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import tink  # type: ignore[import-untyped]

from ....common.serde import RuleError
from ..kms_driver_registry import conf_or_env, import_sdk

__all__ = [
    "ENCRYPT_AZURE_KEY_VERSION_SAVE",
    "AzureSettings",
    "KeyVaultId",
    "azure_settings",
    "credentials",
    "get_versioned_key_id",
    "is_versionless",
    "parse_key_id",
    "with_version",
]

PREFIX = "azure-kms://"
EXTRA = "kms-azure"
TENANT_ID = "tenant.id"
CLIENT_ID = "client.id"
CLIENT_SECRET = "client.secret"
# A KEK's kmsProps entry: "true" saves the wrapping key version with each DEK (see azure_aead).
ENCRYPT_AZURE_KEY_VERSION_SAVE = "encrypt.azure.key.version.save"


class KeyVaultId(NamedTuple):
    vault_url: str
    name: str
    version: str | None


def parse_key_id(kms_key_id: str) -> KeyVaultId:
    """The vault, name and version (None when versionless) of a key id; TinkError for another id."""
    parts = urllib.parse.urlsplit(kms_key_id)
    segments = [s for s in parts.path.split("/") if s]
    if not parts.scheme or not parts.netloc or len(segments) not in (2, 3) or segments[0] != "keys":
        raise tink.TinkError(f"invalid Azure Key Vault key id: {kms_key_id}")
    return KeyVaultId(f"{parts.scheme}://{parts.netloc}", segments[1], segments[2] if len(segments) == 3 else None)


def is_versionless(kms_key_id: str) -> bool:
    """Whether the key id names no version (such a key's DEKs need their version saved to survive
    a rotation)."""
    return parse_key_id(kms_key_id).version is None


def with_version(kms_key_id: str, version: str) -> str:
    """The id of ``version`` of the key ``kms_key_id`` names (its own version, if any, replaced)."""
    key = parse_key_id(kms_key_id)
    return f"{key.vault_url}/keys/{key.name}/{version}"


@dataclass(frozen=True)
class AzureSettings:
    """The service principal of the configuration (all None: the default chain)."""

    tenant_id: str | None
    client_id: str | None
    client_secret: str | None = field(repr=False)


def azure_settings(conf: dict[str, Any]) -> AzureSettings:
    principal = {k: conf_or_env(conf, k) for k in (TENANT_ID, CLIENT_ID, CLIENT_SECRET)}
    given = [k for k, v in principal.items() if v is not None]
    if given and len(given) < len(principal):
        missing = ", ".join(k for k, v in principal.items() if v is None)
        raise RuleError(f"azure-kms: a service principal also needs {missing}")
    return AzureSettings(
        tenant_id=principal[TENANT_ID],
        client_id=principal[CLIENT_ID],
        client_secret=principal[CLIENT_SECRET],
    )


def credentials(conf: dict[str, Any]) -> Any:
    """The azure-identity credential the configuration names."""
    settings = azure_settings(conf)
    identity = import_sdk("azure.identity", EXTRA)
    if settings.tenant_id is not None:
        return identity.ClientSecretCredential(settings.tenant_id, settings.client_id, settings.client_secret)
    return identity.DefaultAzureCredential()


def get_versioned_key_id(conf: dict[str, Any], kms_key_id: str) -> str:
    """``kms_key_id`` with a version: its own, else the key's current one, asked of the vault."""
    key = parse_key_id(kms_key_id)
    if key.version is not None:
        return kms_key_id
    keys = import_sdk("azure.keyvault.keys", EXTRA)
    failed = f"Failed to resolve Azure Key Vault key id for key name '{key.name}' in vault {key.vault_url}"
    try:
        found = keys.KeyClient(vault_url=key.vault_url, credential=credentials(conf)).get_key(key.name)
    except Exception as e:
        raise tink.TinkError(failed) from e
    if found is None or found.id is None:
        raise tink.TinkError(failed)
    if parse_key_id(found.id).version is None:
        raise tink.TinkError(f"resolved Azure Key Vault key id is missing a version segment: {found.id}")
    return str(found.id)
