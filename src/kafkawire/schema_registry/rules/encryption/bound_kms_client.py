"""A Tink KMS client bound to one key URI, or to every key of its prefix when it was given none.

The Azure, GCP and Vault clients answer `does_support` and refuse a key in `get_aead` alike (as
confluent-kafka's three do, word for word); each keeps its own constructor, where they differ.
"""

from __future__ import annotations

from typing import ClassVar

import tink  # type: ignore[import-untyped]


class BoundKmsClient(tink.KmsClient):  # type: ignore[misc]
    prefix: ClassVar[str]
    _key_uri: str | None

    def does_support(self, key_uri: str) -> bool:
        if not self._key_uri:
            return key_uri.startswith(self.prefix)
        return key_uri == self._key_uri

    def _key_id(self, key_uri: str) -> str:
        """``key_uri`` without its prefix, once this client may use it (else `tink.TinkError`)."""
        if self._key_uri and self._key_uri != key_uri:
            raise tink.TinkError(f"This client is bound to {self._key_uri} and cannot use key {key_uri}")
        if not key_uri.startswith(self.prefix):
            raise tink.TinkError("Invalid key_uri.")
        return key_uri[len(self.prefix) :]
