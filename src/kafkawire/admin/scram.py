"""SCRAM credential calls (KIP-554, Kafka 2.7+): describe and alter users' credentials at any broker.

An upsertion's password never leaves the process: the request carries the salt and the salted
password (PBKDF2-HMAC with the mechanism's hash, as SCRAM defines it). A broker without these APIs
fails the call with ``_UNSUPPORTED_FEATURE``, in librdkafka's words (`core/versions.py`).
"""

from __future__ import annotations

import os
from concurrent.futures import Future
from typing import Any

from ..client import routers
from ..core.kafka_error import KafkaError
from ..core.policy.admin import ADMIN_READ
from ..core.sasl import salted_password
from ..protocol.apis import ALTER_USER_SCRAM_CREDENTIALS, DESCRIBE_USER_SCRAM_CREDENTIALS
from ..protocol.codec import Struct
from .base import _CLUSTER, AdminBase, _error, _invalid
from .scram_types import (
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialAlteration,
    UserScramCredentialDeletion,
    UserScramCredentialsDescription,
    UserScramCredentialUpsertion,
)

_SASL_NAME = {ScramMechanism.SCRAM_SHA_256: "SCRAM-SHA-256", ScramMechanism.SCRAM_SHA_512: "SCRAM-SHA-512"}
_SALT_BYTES = 64


def _user(user: Any) -> str:
    if not isinstance(user, str):
        raise TypeError(f"Expected user to be a string, not {type(user).__name__}")
    if not user:
        raise ValueError("'user' is empty: name the SCRAM user")
    return user


def _mechanism(mechanism: Any) -> ScramMechanism:
    if not isinstance(mechanism, ScramMechanism):
        raise TypeError(f"Expected mechanism to be a ScramMechanism, not {type(mechanism).__name__}")
    return mechanism


def _check_alteration(a: Any) -> None:
    """confluent-kafka's checks of one alteration (TypeError / ValueError)."""
    if not isinstance(a, UserScramCredentialAlteration):
        raise TypeError(f"Expected UserScramCredentialAlteration, not {type(a).__name__}")
    _user(a.user)
    if isinstance(a, UserScramCredentialUpsertion):
        info = a.scram_credential_info
        if not isinstance(info, ScramCredentialInfo):
            raise TypeError("Expected scram_credential_info to be a ScramCredentialInfo")
        _mechanism(info.mechanism)
        if isinstance(info.iterations, bool) or not isinstance(info.iterations, int):
            raise TypeError("Expected iterations to be an int")
        if info.iterations <= 0:
            raise ValueError("'iterations' must be positive")
        if not isinstance(a.password, bytes):
            raise TypeError("Expected password to be bytes")
        if not a.password:
            raise ValueError("'password' is empty")
        if a.salt is not None:
            if not isinstance(a.salt, bytes):
                raise TypeError("Expected salt to be bytes")
            if not a.salt:
                raise ValueError("'salt' cannot be empty")
    elif isinstance(a, UserScramCredentialDeletion):
        _mechanism(a.mechanism)
    else:
        raise TypeError("Expected a UserScramCredentialUpsertion or UserScramCredentialDeletion")


def _upsertion(a: UserScramCredentialUpsertion) -> dict[str, Any]:
    info = a.scram_credential_info
    salt = a.salt if a.salt is not None else os.urandom(_SALT_BYTES)
    mechanism = _SASL_NAME.get(info.mechanism)
    if mechanism is None:
        raise ValueError(f"cannot salt a password for {info.mechanism}")
    salted = salted_password(mechanism, a.password, salt, info.iterations)
    return {
        "name": a.user,
        "mechanism": info.mechanism.value,
        "iterations": info.iterations,
        "salt": salt,
        "salted_password": salted,
    }


def _mechanism_of(code: int) -> ScramMechanism:
    try:
        return ScramMechanism(code)
    except ValueError:
        return ScramMechanism.UNKNOWN


class ScramCalls(AdminBase):
    """Users' SCRAM credentials."""

    def describe_user_scram_credentials(
        self, users: list[str] | None = None, **kwargs: Any
    ) -> Future[dict[str, UserScramCredentialsDescription]] | dict[str, Future[UserScramCredentialsDescription]]:
        """Each user's mechanisms and iterations. ``users`` None: every user, one future of a dict;
        else a future per user."""
        if users is not None:
            if not isinstance(users, list):
                raise TypeError(f"Expected users to be a list of strings, not {type(users).__name__}")
            for u in users:
                _user(u)
        request_s, _, _ = self._options(kwargs)
        if users is not None and len(set(users)) != len(users):  # refused in the futures, as librdkafka
            return {user: _invalid("Duplicate users aren't allowed in the request") for user in users}
        every_user = users is None

        def body(keys: list[str], version: int) -> dict[str, Any]:
            return {"users": None if every_user else [{"name": u} for u in keys]}

        def parse(response: Struct, keys: list[str], node: int | None) -> dict[str, Any]:
            error = _error(response.error_code, response.error_message)
            if error is not None:
                return dict.fromkeys(keys, error)
            found: dict[str, Any] = {}
            for r in response.results:
                user_error = _error(r.error_code, r.error_message)
                infos = [ScramCredentialInfo(_mechanism_of(c.mechanism), c.iterations) for c in r.credential_infos]
                found[r.user] = user_error if user_error is not None else UserScramCredentialsDescription(r.user, infos)
            if every_user:
                return {_CLUSTER: {u: d for u, d in found.items() if not isinstance(d, KafkaError)}}
            return found

        keys = [_CLUSTER] if every_user else list(users or [])
        futures = self._run(
            keys, DESCRIBE_USER_SCRAM_CREDENTIALS, routers.ANY_BROKER, body, parse, request_s, policy=ADMIN_READ
        )
        return futures[_CLUSTER] if every_user else futures

    def alter_user_scram_credentials(
        self, alterations: list[UserScramCredentialAlteration], **kwargs: Any
    ) -> dict[str, Future[None]]:
        """Upsert or delete credentials; a future per user (every alteration of a user together)."""
        if not isinstance(alterations, list):
            raise TypeError(f"Expected alterations to be a list, not {type(alterations).__name__}")
        if not alterations:
            raise ValueError("alterations is empty: nothing to change")
        for a in alterations:
            _check_alteration(a)
        request_s, _, _ = self._options(kwargs)
        # Salted once, here: a retry sends the same bytes.
        upserts = [(a.user, _upsertion(a)) for a in alterations if isinstance(a, UserScramCredentialUpsertion)]
        deletes = [
            (a.user, {"name": a.user, "mechanism": a.mechanism.value})
            for a in alterations
            if isinstance(a, UserScramCredentialDeletion)
        ]
        users = list(dict.fromkeys(a.user for a in alterations))

        def body(keys: list[str], version: int) -> dict[str, Any]:
            wanted = set(keys)
            return {
                "deletions": [d for u, d in deletes if u in wanted],
                "upsertions": [x for u, x in upserts if u in wanted],
            }

        def parse(response: Struct, keys: list[str], node: int | None) -> dict[str, Any]:
            return {r.user: _error(r.error_code, r.error_message) for r in response.results}

        # ZooKeeper-mode brokers take it at the controller only (NOT_CONTROLLER elsewhere); KRaft anywhere.
        return self._run(users, ALTER_USER_SCRAM_CREDENTIALS, routers.CONTROLLER, body, parse, request_s)
