"""A small OAuth 2.0 token endpoint over HTTPS (or plain HTTP) on 127.0.0.1: the stand-in for an
identity provider in the OIDC and Schema Registry bearer tests (it judges nothing about Kafka: Kafka 2.3's OAUTHBEARER listener judges the tokens).

It answers the client-credentials grant (RFC 6749 4.4) for one client id and secret with Basic
authentication, issuing unsecured JWTs (alg none, what Kafka's unsecured validator accepts) for a
principal with a chosen lifetime, and 401 ``invalid_client`` otherwise. Given ``assertion_key`` (a
public key), it answers the JWT-bearer grant (RFC 7523) too: the assertion's RS256/ES256 signature
checked with that key (ES256 in JWS's r||s form; a DER signature is recorded as such and refused),
and its time claims. It records every grant request it saw (the form, whether the credentials were
right, when, the token it gave, the assertion's header and claims).
"""

from __future__ import annotations

import base64
import json
import ssl
import threading
import time
import urllib.parse
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.harness.certs import Leaf


def unsecured_jwt(principal: str, lifetime: float) -> str:
    def part(obj: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()

    now = time.time()
    return f"{part({'alg': 'none'})}.{part({'sub': principal, 'iat': now, 'exp': now + lifetime})}."


JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"


@dataclass
class Grant:
    form: dict[str, str]
    authorized: bool
    at: float
    token: str | None = None
    assertion: tuple[dict[str, Any], dict[str, Any], str] | None = None  # header, claims, signature form


def _unb64(part: str) -> bytes:
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def check_assertion(assertion: str, key: Any) -> tuple[dict[str, Any], dict[str, Any], str, bool]:
    """(header, claims, signature form "jose"/"der"/"bad", valid): an RFC 7523 assertion judged with
    ``key`` (cryptography's public key), its times against now."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec, padding
    from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

    head, body, signature = assertion.split(".")
    header, claims = json.loads(_unb64(head)), json.loads(_unb64(body))
    data, sig = f"{head}.{body}".encode(), _unb64(signature)
    form = "bad"
    try:
        if header.get("alg") == "RS256":
            key.verify(sig, data, padding.PKCS1v15(), hashes.SHA256())
            form = "jose"
        elif header.get("alg") == "ES256" and len(sig) == 64:
            der = encode_dss_signature(int.from_bytes(sig[:32], "big"), int.from_bytes(sig[32:], "big"))
            key.verify(der, data, ec.ECDSA(hashes.SHA256()))
            form = "jose"
        elif header.get("alg") == "ES256":
            key.verify(sig, data, ec.ECDSA(hashes.SHA256()))
            form = "der"
    except (InvalidSignature, ValueError):
        form = "bad"
    now = time.time()
    in_time = claims.get("nbf", 0) <= now + 5 and now < claims.get("exp", 0)
    return header, claims, form, form == "jose" and in_time


class TokenEndpoint:
    def __init__(
        self,
        leaf: Leaf | None,
        client_id: str,
        secret: str,
        principal: str,
        lifetime: float = 3600.0,
        assertion_key: Any = None,
        token_field: str = "access_token",
    ) -> None:
        """``token_field``: the answer's field holding the token (id_token: as GCP answers a JWT-bearer grant)."""
        self.client_id, self.secret, self.principal, self.lifetime = client_id, secret, principal, lifetime
        self.assertion_key, self.token_field = assertion_key, token_field
        self.grants: list[Grant] = []
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                form = dict(urllib.parse.parse_qsl(self.rfile.read(length).decode()))
                expected = f"{endpoint.client_id}:{endpoint.secret}".encode()
                authorized = self.headers.get("Authorization") == "Basic " + base64.b64encode(expected).decode()
                grant = Grant(form, authorized, time.time())
                endpoint.grants.append(grant)
                if form.get("grant_type") == JWT_BEARER and endpoint.assertion_key is not None:
                    header, claims, signature, valid = check_assertion(
                        form.get("assertion", ".."), endpoint.assertion_key
                    )
                    grant.assertion, grant.authorized = (header, claims, signature), valid
                    if not valid:
                        self._answer(400, {"error": "invalid_grant", "error_description": "assertion refused"})
                        return
                elif not authorized or form.get("grant_type") != "client_credentials":
                    self._answer(401, {"error": "invalid_client", "error_description": "client authentication failed"})
                    return
                token = grant.token = unsecured_jwt(endpoint.principal, endpoint.lifetime)
                self._answer(
                    200, {endpoint.token_field: token, "token_type": "bearer", "expires_in": endpoint.lifetime}
                )

            def _answer(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        scheme = "http"  # without a leaf certificate: the Schema Registry's issuer URL may be http://
        if leaf is not None:
            tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            tls.load_cert_chain(leaf.cert, leaf.key)
            self._server.socket = tls.wrap_socket(self._server.socket, server_side=True)
            scheme = "https"
        self.url = f"{scheme}://127.0.0.1:{self._server.server_address[1]}/oauth2/token"
        self._thread = threading.Thread(target=self._server.serve_forever, name="token-endpoint", daemon=True)

    def __enter__(self) -> TokenEndpoint:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
