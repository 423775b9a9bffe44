"""The HashiCorp Vault transit driver (``hcvault://https://VAULT:8200/MOUNT/keys/NAME``).

Settings, each from the rule configuration else its environment variable: ``token.id``
(VAULT_TOKEN), ``namespace`` (VAULT_NAMESPACE), an AppRole login with ``approle.role.id`` and
``approle.secret.id`` (VAULT_APPROLE_ROLE_ID, VAULT_APPROLE_SECRET_ID), and TLS:
``ssl.ca.location`` (VAULT_CACERT; the server is always verified, against the system CAs when
unset), ``ssl.certificate.location`` and ``ssl.key.location`` (VAULT_CLIENT_CERT,
VAULT_CLIENT_KEY) for a client certificate. The client is `hcvault_client`'s; hvac is imported only
when a client is made: ``pip install kafkawire[kms-hcvault]``.
"""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass, field
from typing import Any

from ....common.serde import RuleError
from ..kms_driver_registry import KmsDriver, conf_or_env, register_kms_driver
from .hcvault_client import VAULT_KEYURI_PREFIX, HcVaultKmsClient

__all__ = ["HcVaultKmsClient", "HcVaultKmsDriver", "HcVaultSettings", "hcvault_settings"]

PREFIX = VAULT_KEYURI_PREFIX
TOKEN_ID = "token.id"
NAMESPACE = "namespace"
APPROLE_ROLE_ID = "approle.role.id"
APPROLE_SECRET_ID = "approle.secret.id"
SSL_CA_LOCATION = "ssl.ca.location"
SSL_CERTIFICATE_LOCATION = "ssl.certificate.location"
SSL_KEY_LOCATION = "ssl.key.location"


@dataclass(frozen=True)
class HcVaultSettings:
    """What a client of one key is made from."""

    key_url: str
    vault_url: str
    key_path: str
    token: str | None = field(repr=False)
    namespace: str | None
    role_id: str | None
    secret_id: str | None = field(repr=False)
    verify: bool | str
    cert: str | tuple[str, str] | None


def hcvault_settings(conf: dict[str, Any], key_url: str | None) -> HcVaultSettings:
    """The driver's settings for ``key_url``; a key that is not ``MOUNT/keys/NAME`` on an
    http(s) Vault, or a client key without its certificate, is refused."""
    if key_url is None or not key_url.startswith(PREFIX):
        raise RuleError(f"a HashiCorp Vault key URL starts with {PREFIX}")
    parts = urllib.parse.urlsplit(key_url[len(PREFIX) :])
    segments = [s for s in parts.path.split("/") if s]
    if parts.scheme not in ("http", "https") or not parts.netloc or len(segments) < 3 or segments[-2] != "keys":
        raise RuleError(f"{key_url!r} is not a Vault transit key (hcvault://https://VAULT/MOUNT/keys/NAME)")
    cert = conf_or_env(conf, SSL_CERTIFICATE_LOCATION, "VAULT_CLIENT_CERT")
    key = conf_or_env(conf, SSL_KEY_LOCATION, "VAULT_CLIENT_KEY")
    if key is not None and cert is None:
        raise RuleError(
            f"hcvault: {SSL_CERTIFICATE_LOCATION} required, as {SSL_KEY_LOCATION} is set (a client key needs its certificate)"
        )
    return HcVaultSettings(
        key_url=key_url,
        vault_url=f"{parts.scheme}://{parts.netloc}",
        key_path=parts.path,
        token=conf_or_env(conf, TOKEN_ID, "VAULT_TOKEN"),
        namespace=conf_or_env(conf, NAMESPACE, "VAULT_NAMESPACE"),
        role_id=conf_or_env(conf, APPROLE_ROLE_ID, "VAULT_APPROLE_ROLE_ID"),
        secret_id=conf_or_env(conf, APPROLE_SECRET_ID, "VAULT_APPROLE_SECRET_ID"),
        verify=conf_or_env(conf, SSL_CA_LOCATION, "VAULT_CACERT") or True,
        cert=(cert, key) if cert is not None and key is not None else cert,
    )


class HcVaultKmsDriver(KmsDriver):
    def get_key_url_prefix(self) -> str:
        return PREFIX

    def new_kms_client(self, conf: dict[str, Any], key_url: str | None) -> HcVaultKmsClient:
        s = hcvault_settings(conf, key_url)
        return HcVaultKmsClient(s.key_url, s.token, s.namespace, s.role_id, s.secret_id, s.verify, s.cert)

    @classmethod
    def register(cls) -> HcVaultKmsDriver:
        driver = cls()
        register_kms_driver(driver)
        return driver
