"""SCRAM credential values (KIP-554), named and shaped as in ``confluent_kafka.admin``.

Constructors keep what they are given; ``alter_user_scram_credentials()`` checks it (TypeError,
ValueError), as confluent-kafka does.
"""

from __future__ import annotations

from ..base import model
from .types import _Ordered

__all__ = [
    "ScramCredentialInfo",
    "ScramMechanism",
    "UserScramCredentialAlteration",
    "UserScramCredentialDeletion",
    "UserScramCredentialUpsertion",
    "UserScramCredentialsDescription",
]


class ScramMechanism(_Ordered):
    """The values are Kafka's wire numbers."""

    UNKNOWN = model.SCRAM_MECHANISM_UNKNOWN
    SCRAM_SHA_256 = model.SCRAM_MECHANISM_SHA_256
    SCRAM_SHA_512 = model.SCRAM_MECHANISM_SHA_512


class ScramCredentialInfo:
    """A mechanism and its PBKDF2 iteration count."""

    def __init__(self, mechanism: ScramMechanism, iterations: int) -> None:
        self.mechanism = mechanism
        self.iterations = iterations

    def __repr__(self) -> str:
        return f"ScramCredentialInfo({self.mechanism}, iterations={self.iterations})"


class UserScramCredentialsDescription:
    """A user's credentials as the broker describes them (no secrets)."""

    def __init__(self, user: str, scram_credential_infos: list[ScramCredentialInfo]) -> None:
        self.user = user
        self.scram_credential_infos = scram_credential_infos

    def __repr__(self) -> str:
        return f"UserScramCredentialsDescription({self.user!r}, {self.scram_credential_infos!r})"


class UserScramCredentialAlteration:
    """What ``alter_user_scram_credentials()`` takes: an upsertion or a deletion for ``user``."""

    def __init__(self, user: str) -> None:
        self.user = user


class UserScramCredentialUpsertion(UserScramCredentialAlteration):
    """Set ``user``'s credential for a mechanism; ``salt`` None: a random one is drawn."""

    def __init__(
        self, user: str, scram_credential_info: ScramCredentialInfo, password: bytes, salt: bytes | None = None
    ) -> None:
        super().__init__(user)
        self.scram_credential_info = scram_credential_info
        self.password = password
        self.salt = salt

    def __repr__(self) -> str:  # never the password or salt
        return f"UserScramCredentialUpsertion({self.user!r}, {self.scram_credential_info!r})"


class UserScramCredentialDeletion(UserScramCredentialAlteration):
    """Remove ``user``'s credential for ``mechanism``."""

    def __init__(self, user: str, mechanism: ScramMechanism) -> None:
        super().__init__(user)
        self.mechanism = mechanism

    def __repr__(self) -> str:
        return f"UserScramCredentialDeletion({self.user!r}, {self.mechanism})"
