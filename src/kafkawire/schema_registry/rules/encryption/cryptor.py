"""Tink's primitives for DEKs and the local KMS.

A DEK's key material is a serialized Tink key proto (``AesGcmKey`` or ``AesSivKey``), used as a
RAW key (no Tink output prefix) with empty associated data: the bytes the Java and
confluent-kafka clients write and read.
"""

from __future__ import annotations

import threading
from typing import Any

import tink  # type: ignore[import-untyped]
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from tink import aead, daead, proto_keyset_format, secret_key_access
from tink.proto import aes_gcm_pb2, tink_pb2  # type: ignore[import-untyped]

from .kms_driver_registry import Aead

__all__ = ["CryptoError", "Cryptor", "local_kms_aead"]

aead.register()
daead.register()

CryptoError = tink.TinkError
NO_ASSOCIATED_DATA = b""
_AES_GCM_KEY = "type.googleapis.com/google.crypto.tink.AesGcmKey"
# By DekAlgorithm value (the DEK registry's module is not imported: its mock imports this one).
_TEMPLATES: dict[str, Any] = {
    "AES128_GCM": aead.aead_key_templates.AES128_GCM,
    "AES256_GCM": aead.aead_key_templates.AES256_GCM,
    "AES256_SIV": daead.deterministic_aead_key_templates.AES256_SIV,
}
_CACHED_PRIMITIVES = 1000


def _raw_handle(type_url: str, key_value: bytes) -> Any:
    """A keyset of the one key, with no output prefix (ciphertexts are the bare AEAD output)."""
    keyset = tink_pb2.Keyset(primary_key_id=1)
    key = keyset.key.add()
    key.key_data.type_url = type_url
    key.key_data.value = key_value
    key.key_data.key_material_type = tink_pb2.KeyData.SYMMETRIC
    key.status = tink_pb2.ENABLED
    key.key_id = 1
    key.output_prefix_type = tink_pb2.RAW
    return proto_keyset_format.parse(keyset.SerializeToString(), secret_key_access.TOKEN)


class Cryptor:
    """Makes DEKs of one algorithm and encrypts with them; primitives are kept per key."""

    def __init__(self, algorithm: str) -> None:
        """``algorithm``: a DekAlgorithm."""
        self.dek_format = algorithm
        self.deterministic = algorithm == "AES256_SIV"
        self._template = _TEMPLATES[algorithm]
        self._lock = threading.Lock()
        self._primitives: dict[bytes, Any] = {}

    def generate_key(self) -> bytes:
        """Fresh key material: the serialized Tink key proto."""
        handle = tink.new_keyset_handle(self._template)
        keyset = tink_pb2.Keyset.FromString(proto_keyset_format.serialize(handle, secret_key_access.TOKEN))
        value: bytes = keyset.key[0].key_data.value
        return value

    def _primitive(self, key: bytes) -> Any:
        with self._lock:
            primitive = self._primitives.get(key)
        if primitive is None:
            handle = _raw_handle(self._template.type_url, key)
            primitive = handle.primitive(daead.DeterministicAead if self.deterministic else aead.Aead)
            with self._lock:
                if len(self._primitives) >= _CACHED_PRIMITIVES:
                    self._primitives.pop(next(iter(self._primitives)))
                self._primitives[key] = primitive
        return primitive

    def encrypt(self, key: bytes, plaintext: bytes) -> bytes:
        primitive = self._primitive(key)
        if self.deterministic:
            result: bytes = primitive.encrypt_deterministically(plaintext, NO_ASSOCIATED_DATA)
        else:
            result = primitive.encrypt(plaintext, NO_ASSOCIATED_DATA)
        return result

    def decrypt(self, key: bytes, ciphertext: bytes) -> bytes:
        primitive = self._primitive(key)
        if self.deterministic:
            result: bytes = primitive.decrypt_deterministically(ciphertext, NO_ASSOCIATED_DATA)
        else:
            result = primitive.decrypt(ciphertext, NO_ASSOCIATED_DATA)
        return result


def local_kms_aead(secret: str) -> Aead:
    """The local KMS's AEAD: AES128-GCM keyed by HKDF-SHA256 of the secret (no salt, no info,
    16 bytes), as the Java and confluent-kafka local KMS derive it."""
    key = HKDF(algorithm=hashes.SHA256(), length=16, salt=None, info=b"").derive(secret.encode("utf-8"))
    key_proto = aes_gcm_pb2.AesGcmKey(version=0, key_value=key).SerializeToString()
    primitive: Aead = _raw_handle(_AES_GCM_KEY, key_proto).primitive(aead.Aead)
    return primitive
