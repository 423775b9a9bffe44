"""The Tink KMS client of one HashiCorp Vault transit key (``hcvault://https://VAULT:8200/MOUNT/keys/NAME``).

It logs in once when made (a token, or an AppRole's role and secret ids), and its AEAD is Tink's
Vault transit AEAD. hvac is imported when a client is made, not with this module:
``pip install kafkawire[kms-hcvault]``.
"""

from __future__ import annotations

import urllib.parse

import tink  # type: ignore[import-untyped]

from ..bound_kms_client import BoundKmsClient
from ..kms_driver_registry import Aead, import_sdk

__all__ = ["VAULT_KEYURI_PREFIX", "HcVaultKmsClient"]

VAULT_KEYURI_PREFIX = "hcvault://"
EXTRA = "kms-hcvault"


class HcVaultKmsClient(BoundKmsClient):
    """Bound to ``key_uri``. ``verify`` is True or a CA bundle's path (never False here: the
    driver always verifies); ``cert`` a client certificate's path, or (certificate, key) paths."""

    prefix = VAULT_KEYURI_PREFIX

    def __init__(
        self,
        key_uri: str,
        token: str | None,
        ns: str | None = None,
        role_id: str | None = None,
        secret_id: str | None = None,
        verify: bool | str = True,
        cert: str | tuple[str, str] | None = None,
    ) -> None:
        if not key_uri.startswith(VAULT_KEYURI_PREFIX):
            raise tink.TinkError("Invalid key_uri.")
        self._key_uri = key_uri
        vault = urllib.parse.urlparse(key_uri[len(VAULT_KEYURI_PREFIX) :])
        hvac = import_sdk("hvac", EXTRA)
        self._client = hvac.Client(
            url=f"{vault.scheme}://{vault.netloc}", token=token, namespace=ns, verify=verify, cert=cert
        )
        if role_id and secret_id:
            self._client.auth.approle.login(role_id=role_id, secret_id=secret_id)

    def get_aead(self, key_uri: str) -> Aead:
        key_id = self._key_id(key_uri)
        hcvault = import_sdk("tink.integration.hcvault", EXTRA)
        path = urllib.parse.urlparse(key_id).path
        found: Aead = hcvault.new_aead(path, self._client)
        return found
