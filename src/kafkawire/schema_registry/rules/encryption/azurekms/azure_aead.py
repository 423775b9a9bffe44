"""A Key Vault key's wrap and unwrap as a Tink AEAD, the version that wrapped a DEK saved with it.

Key Vault addresses a wrap by key version and its ciphertext does not name the version, so once a
versionless key is rotated, a DEK it wrapped could no longer be unwrapped. With an
``encrypt_target`` the wrapped DEK carries its version: ``azure:v1:`` + the 32-hex-digit version +
``:`` + Key Vault's ciphertext. Such a DEK is unwrapped with the version it names whatever the
setting is now (it may have been switched off since). The Key Vault clients are given, so this
module needs no SDK.
"""

from __future__ import annotations

import string
from collections.abc import Callable
from typing import Any

import tink  # type: ignore[import-untyped]
from tink import aead

__all__ = ["AzureKmsAead"]

_PREFIX = b"azure:v1:"
_VERSION_LENGTH = 32
_HEADER_LENGTH = len(_PREFIX) + _VERSION_LENGTH + 1


def _is_valid_version(value: str | None) -> bool:
    """A version fits the fixed-width prefix; one read from a wrapped DEK is unauthenticated and
    goes into a key URL, so it is checked as strictly as one about to be written."""
    return value is not None and len(value) == _VERSION_LENGTH and all(c in string.hexdigits for c in value)


def _extract_version(ciphertext: bytes) -> str | None:
    """The version a wrapped DEK names, or None for one wrapped without it (read as it was)."""
    if (
        len(ciphertext) < _HEADER_LENGTH
        or not ciphertext.startswith(_PREFIX)
        or ciphertext[_HEADER_LENGTH - 1] != ord(":")
    ):
        return None
    return ciphertext[len(_PREFIX) : _HEADER_LENGTH - 1].decode("ascii", errors="replace")


class AzureKmsAead(aead.Aead):  # type: ignore[misc]
    """``default_client`` wraps when no ``encrypt_target`` is given (a callable answering the
    client and version to wrap with, asked at the first wrap only) and unwraps DEKs that name no
    version; ``client_factory`` makes the client of a version a DEK names. The clients are Key
    Vault ``CryptographyClient``s; their ``ValueError``s become ``TinkError``s."""

    def __init__(
        self,
        default_client: Any,
        algorithm: Any,
        encrypt_target: Callable[[], tuple[Any, str]] | None = None,
        client_factory: Callable[[str], Any] | None = None,
    ) -> None:
        if not default_client:
            raise tink.TinkError("client cannot be null.")
        self._default_client = default_client
        self._algorithm = algorithm
        self._encrypt_target = encrypt_target
        self._client_factory = client_factory

    def encrypt(self, plaintext: bytes, associated_data: bytes) -> bytes:
        if self._encrypt_target is None:
            return self._wrap(self._default_client, plaintext)
        try:
            client, version = self._encrypt_target()
        except Exception as e:
            raise tink.TinkError(f"failed to resolve kms client for encryption: {e}") from e
        if not _is_valid_version(version):  # what is wrapped here must unwrap here
            raise tink.TinkError(
                f"kms key version '{version}' must be a {_VERSION_LENGTH}-character hex string; "
                "cannot be embedded in a fixed-width azure:v1: prefix"
            )
        return _PREFIX + version.encode("ascii") + b":" + self._wrap(client, plaintext)

    def decrypt(self, ciphertext: bytes, associated_data: bytes) -> bytes:
        client, wrapped = self._default_client, ciphertext
        version = _extract_version(ciphertext)
        if version is not None:
            if not _is_valid_version(version):
                raise tink.TinkError(f"ciphertext carries an invalid azure:v1: key version: '{version}'")
            if self._client_factory is None:
                raise tink.TinkError(
                    "ciphertext carries a kms key version prefix, but this Aead has no client factory to resolve it"
                )
            try:
                client = self._client_factory(version)
            except Exception as e:
                raise tink.TinkError(f"failed to resolve kms client for embedded key version '{version}': {e}") from e
            wrapped = ciphertext[_HEADER_LENGTH:]
        try:
            plaintext: bytes = client.decrypt(self._algorithm, wrapped).plaintext
        except ValueError as e:
            raise tink.TinkError(e) from e
        return plaintext

    def _wrap(self, client: Any, plaintext: bytes) -> bytes:
        try:
            wrapped: bytes = client.encrypt(self._algorithm, plaintext).ciphertext
        except ValueError as e:
            raise tink.TinkError(e) from e
        return wrapped
