"""The Tink KMS client of Google Cloud KMS keys (``gcp-kms://projects/P/locations/L/keyRings/R/cryptoKeys/K``).

The SDK's ``KeyManagementServiceClient`` is made with the client, and Tink's Cloud KMS AEAD over it
with each key: both imported then, not with this module (``pip install kafkawire[kms-gcp]``).
"""

from __future__ import annotations

from typing import Any

import tink  # type: ignore[import-untyped]

from ..bound_kms_client import BoundKmsClient
from ..kms_driver_registry import Aead, import_sdk

__all__ = ["GCP_KEYURI_PREFIX"]

GCP_KEYURI_PREFIX = "gcp-kms://"
EXTRA = "kms-gcp"


class _GcpKmsClient(BoundKmsClient):
    """Bound to ``key_uri`` (any Cloud KMS key when it is None or empty); ``credentials`` are a
    service account's, None for the application default credentials."""

    prefix = GCP_KEYURI_PREFIX

    def __init__(self, key_uri: str | None, credentials: Any) -> None:
        if not key_uri:
            self._key_uri = None
        elif key_uri.startswith(GCP_KEYURI_PREFIX):
            self._key_uri = key_uri
        else:
            raise tink.TinkError("Invalid key_uri.")
        kms_v1 = import_sdk("google.cloud.kms_v1", EXTRA)
        self._client = kms_v1.KeyManagementServiceClient(credentials=credentials)

    def get_aead(self, key_uri: str) -> Aead:
        self._key_id(key_uri)
        gcpkms = import_sdk("tink.integration.gcpkms", EXTRA)
        found: Aead = gcpkms.new_client(kms_v1_client=self._client, key_uri=key_uri).get_aead(key_uri)
        return found
