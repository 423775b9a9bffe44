"""The Google Cloud KMS driver (``gcp-kms://projects/P/locations/L/keyRings/R/cryptoKeys/K``).

Credentials: a service account given by ``client.id``, ``client.email``, ``private.key.id`` and
``private.key`` (with ``token.uri``; ``account.type`` must be ``service_account``), else the
application default credentials. The SDK is imported only when a client is made:
``pip install kafkawire[kms-gcp]``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ....common.serde import RuleError
from ..kms_driver_registry import KmsDriver, conf_or_env, import_sdk, register_kms_driver
from .gcp_client import EXTRA, GCP_KEYURI_PREFIX, _GcpKmsClient

__all__ = ["GcpKmsDriver", "GcpSettings", "gcp_settings"]

PREFIX = GCP_KEYURI_PREFIX
ACCOUNT_TYPE = "account.type"
CLIENT_ID = "client.id"
CLIENT_EMAIL = "client.email"
PRIVATE_KEY_ID = "private.key.id"
PRIVATE_KEY = "private.key"
TOKEN_URI = "token.uri"
DEFAULT_TOKEN_URI = "https://oauth2.googleapis.com/token"
_ACCOUNT_KEYS = (CLIENT_ID, CLIENT_EMAIL, PRIVATE_KEY_ID, PRIVATE_KEY)


@dataclass(frozen=True)
class GcpSettings:
    """What a client of one key is made from; ``service_account`` is None for the defaults."""

    key_url: str
    service_account: dict[str, str] | None = field(repr=False)  # holds the private key


def gcp_settings(conf: dict[str, Any], key_url: str | None) -> GcpSettings:
    """The driver's settings for ``key_url``; half a service account is refused."""
    if key_url is None or not key_url.startswith(PREFIX):
        raise RuleError(f"a Google Cloud KMS key URL starts with {PREFIX}")
    name = key_url[len(PREFIX) :]
    parts = name.split("/")
    if len(parts) != 8 or parts[0::2] != ["projects", "locations", "keyRings", "cryptoKeys"] or not all(parts[1::2]):
        raise RuleError(f"{name!r} is not a Cloud KMS key (projects/P/locations/L/keyRings/R/cryptoKeys/K)")
    account_type = conf_or_env(conf, ACCOUNT_TYPE) or "service_account"
    if account_type != "service_account":
        raise RuleError(f"gcp-kms: {ACCOUNT_TYPE} must be 'service_account', not {account_type!r}")
    account = {k: conf_or_env(conf, k) for k in _ACCOUNT_KEYS}
    missing = [k for k, v in account.items() if v is None]
    if not missing:
        info = {
            "type": account_type,
            "client_id": str(account[CLIENT_ID]),
            "client_email": str(account[CLIENT_EMAIL]),
            "private_key_id": str(account[PRIVATE_KEY_ID]),
            "private_key": str(account[PRIVATE_KEY]),
            "token_uri": conf_or_env(conf, TOKEN_URI) or DEFAULT_TOKEN_URI,
        }
        return GcpSettings(key_url, info)
    if len(missing) < len(_ACCOUNT_KEYS):
        raise RuleError(f"gcp-kms: a service account also needs {', '.join(missing)}")
    return GcpSettings(key_url, None)


class GcpKmsDriver(KmsDriver):
    def get_key_url_prefix(self) -> str:
        return PREFIX

    def new_kms_client(self, conf: dict[str, Any], key_url: str | None) -> _GcpKmsClient:
        settings = gcp_settings(conf, key_url)
        credentials = None
        if settings.service_account is not None:
            service_account = import_sdk("google.oauth2.service_account", EXTRA)
            credentials = service_account.Credentials.from_service_account_info(settings.service_account)
        return _GcpKmsClient(settings.key_url, credentials)

    @classmethod
    def register(cls) -> GcpKmsDriver:
        driver = cls()
        register_kms_driver(driver)
        return driver
