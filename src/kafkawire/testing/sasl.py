"""The broker's side of SASL PLAIN and SCRAM-SHA-256/512 (RFC 5802), for a cluster made with users.

Sans-IO: a conversation takes the client's token and gives the server's, or fails. The SCRAM
server checks the client's proof against the stored key and proves in turn that it knows the
password (the server signature the client checks).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

from kafkawire.core.sasl import salted_password

PLAIN = "PLAIN"
SCRAM_MECHANISMS = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}
MECHANISMS = (PLAIN, *SCRAM_MECHANISMS)
ITERATIONS = 4096  # Kafka's minimum for SCRAM credentials


class AuthenticationFailed(Exception):
    """The client's credentials (or its messages) were refused."""


class ServerConversation:
    """One login: ``step(token)`` until ``done``."""

    def __init__(self, mechanism: str, users: dict[str, str]) -> None:
        self.mechanism = mechanism
        self.users = users
        self.done = False
        self.user: str | None = None
        self._first_bare = ""
        self._server_first = ""
        self._nonce = ""
        self._salted = b""

    def step(self, token: bytes) -> bytes:
        if self.mechanism == PLAIN:
            return self._plain(token)
        return self._scram_first(token) if not self._server_first else self._scram_final(token)

    def _plain(self, token: bytes) -> bytes:
        parts = token.split(b"\x00")
        if len(parts) != 3:
            raise AuthenticationFailed("malformed PLAIN token")
        user, password = parts[1].decode(errors="replace"), parts[2].decode(errors="replace")
        if self.users.get(user) is None or not hmac.compare_digest(self.users[user], password):
            raise AuthenticationFailed("Authentication failed: Invalid username or password")
        self.user, self.done = user, True
        return b""

    def _scram_first(self, token: bytes) -> bytes:
        text = token.decode(errors="replace")
        if not text.startswith("n,"):
            raise AuthenticationFailed("SCRAM channel binding is not supported")
        self._first_bare = text.split(",", 2)[2]
        fields = dict(item.split("=", 1) for item in self._first_bare.split(",") if "=" in item)
        user = fields.get("n", "").replace("=2C", ",").replace("=3D", "=")
        if user not in self.users or "r" not in fields:
            raise AuthenticationFailed("Authentication failed: Invalid user credentials")
        self.user = user
        self._nonce = fields["r"] + secrets.token_urlsafe(18)
        salt = secrets.token_bytes(16)
        self._salted = salted_password(self.mechanism, self.users[user].encode(), salt, ITERATIONS)
        self._server_first = f"r={self._nonce},s={base64.b64encode(salt).decode()},i={ITERATIONS}"
        return self._server_first.encode()

    def _scram_final(self, token: bytes) -> bytes:
        text = token.decode(errors="replace")
        without_proof, _, proof = text.rpartition(",p=")
        fields = dict(item.split("=", 1) for item in without_proof.split(",") if "=" in item)
        if fields.get("r") != self._nonce:
            raise AuthenticationFailed("SCRAM nonce mismatch")
        digest = SCRAM_MECHANISMS[self.mechanism]
        auth_message = f"{self._first_bare},{self._server_first},{without_proof}".encode()
        client_key = hmac.new(self._salted, b"Client Key", digest).digest()
        stored_key = hashlib.new(digest, client_key).digest()
        signature = hmac.new(stored_key, auth_message, digest).digest()
        try:
            client_proof = base64.b64decode(proof)
        except ValueError:
            raise AuthenticationFailed("malformed SCRAM proof") from None
        if len(client_proof) != len(signature):
            raise AuthenticationFailed("malformed SCRAM proof")
        claimed = bytes(a ^ b for a, b in zip(client_proof, signature, strict=True))
        if not hmac.compare_digest(hashlib.new(digest, claimed).digest(), stored_key):
            raise AuthenticationFailed(
                "Authentication failed during authentication due to invalid credentials with SASL mechanism "
                + self.mechanism
            )
        server_key = hmac.new(self._salted, b"Server Key", digest).digest()
        self.done = True
        return b"v=" + base64.b64encode(hmac.new(server_key, auth_message, digest).digest())
