"""The SASL mechanisms' conversations, against the RFCs' own examples and a server's view."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json

import pytest

from kafkawire.core.sasl import (
    OAuthBearerClient,
    PlainClient,
    SaslError,
    ScramClient,
    parse_jaas_config,
    unsecured_jwt,
)

# RFC 7677 section 3: SCRAM-SHA-256, user "user", password "pencil".
RFC7677_NONCE = "rOprNGfwEbeRWgbNEkqO"
RFC7677_SERVER_FIRST = b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
RFC7677_CLIENT_FINAL = (
    b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
)
RFC7677_SERVER_FINAL = b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="


def test_scram_sha256_matches_rfc7677() -> None:
    c = ScramClient("SCRAM-SHA-256", "user", "pencil", nonce=RFC7677_NONCE)
    assert c.start() == b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO"
    assert c.receive(RFC7677_SERVER_FIRST) == RFC7677_CLIENT_FINAL
    assert c.receive(RFC7677_SERVER_FINAL) is None
    assert c.done


def test_scram_refuses_a_server_that_cannot_prove_the_password() -> None:
    c = ScramClient("SCRAM-SHA-256", "user", "pencil", nonce=RFC7677_NONCE)
    c.start()
    c.receive(RFC7677_SERVER_FIRST)
    with pytest.raises(SaslError, match="could not prove"):
        c.receive(b"v=" + base64.b64encode(b"x" * 32))
    assert not c.done


@pytest.mark.parametrize(
    ("server_first", "why"),
    [
        (b"r=someoneelse,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096", "does not extend"),
        (b"r=rOprNGfwEbeRWgbNEkqO,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096", "does not extend"),
        (b"r=rOprNGfwEbeRWgbNEkqOxx,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=1024", "iteration count 1024"),
        (b"r=rOprNGfwEbeRWgbNEkqOxx,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=2147483647", "iteration count"),
        (b"r=rOprNGfwEbeRWgbNEkqOxx,s=!!,i=4096", "not base64"),
        (b"r=rOprNGfwEbeRWgbNEkqOxx,i=4096", "lacks"),
        (b"e=unknown-user", "refused: unknown-user"),
        (b"\xff\xfe", "not UTF-8"),
    ],
)
def test_scram_refuses_bad_server_first_messages(server_first: bytes, why: str) -> None:
    c = ScramClient("SCRAM-SHA-256", "user", "pencil", nonce=RFC7677_NONCE)
    c.start()
    with pytest.raises(SaslError, match=why):
        c.receive(server_first)


def _server_final(mechanism: str, password: str, client: ScramClient) -> bytes:
    """What an honest server answers, computed independently from the messages on the wire."""
    name = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}[mechanism]
    first = client.start().decode()[3:]
    server_first = f"r={first.split('r=')[1]}srv,s={base64.b64encode(b'salt').decode()},i=4096"
    final = client.receive(server_first.encode())
    assert final is not None
    without_proof = final.decode().rsplit(",p=", 1)[0]
    salted = hashlib.pbkdf2_hmac(name, password.encode(), b"salt", 4096)
    server_key = hmac.new(salted, b"Server Key", name).digest()
    auth = f"{first},{server_first},{without_proof}".encode()
    return b"v=" + base64.b64encode(hmac.new(server_key, auth, name).digest())


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_scram_round_trip_with_escaped_user_name(mechanism: str) -> None:
    c = ScramClient(mechanism, "a=b,c", "sécret")
    assert c.start().startswith(b"n,,n=a=3Db=2Cc,r=")
    assert c.receive(_server_final(mechanism, "sécret", c)) is None
    assert c.done


def test_scram_nonces_are_fresh() -> None:
    assert ScramClient("SCRAM-SHA-512", "u", "p").start() != ScramClient("SCRAM-SHA-512", "u", "p").start()


def test_plain_and_oauthbearer_tokens() -> None:
    assert PlainClient("alice", "alice-secret").start() == b"\x00alice\x00alice-secret"
    o = OAuthBearerClient("tok.en.sig", {"traceId": "123"})
    assert o.start() == b"n,,\x01auth=Bearer tok.en.sig\x01traceId=123\x01\x01"
    assert o.receive(b"") is None and o.done
    o2 = OAuthBearerClient("tok")
    with pytest.raises(SaslError, match="refused the token"):
        o2.receive(b'{"status":"invalid_token"}')


def test_secrets_stay_out_of_reprs_and_errors() -> None:
    c = ScramClient("SCRAM-SHA-256", "user", "pencil-s3cret", nonce=RFC7677_NONCE)
    assert "s3cret" not in repr(c) and "s3cret" not in repr(PlainClient("u", "pencil-s3cret"))
    c.start()
    with pytest.raises(SaslError) as info:
        c.receive(b"e=other-error")
    assert "s3cret" not in str(info.value)


@pytest.mark.parametrize(
    ("text", "family", "options"),
    [
        (
            'org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="a;b\\"c";',
            "PLAIN",
            {"username": "alice", "password": 'a;b"c'},
        ),
        (
            "org.apache.kafka.common.security.scram.ScramLoginModule required username=bob password=pw",
            "SCRAM",
            {"username": "bob", "password": "pw"},
        ),
        (
            'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub="me";',
            "OAUTHBEARER",
            {"unsecuredLoginStringClaim_sub": "me"},
        ),
    ],
)
def test_jaas_config_forms(text: str, family: str, options: dict[str, str]) -> None:
    assert parse_jaas_config(text) == (family, options)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('com.sun.security.auth.module.LdapLoginModule required password="topsecret";', "not supported"),
        ('password="topsecret"', "expected"),
        ('org.apache.kafka.common.security.plain.PlainLoginModule required password="topsecret" junk', "key="),
    ],
)
def test_jaas_config_errors_never_echo_the_text(text: str, why: str) -> None:
    with pytest.raises(ValueError, match=why) as info:
        parse_jaas_config(text)
    assert "topsecret" not in str(info.value)


def _claims(token: str) -> dict[str, object]:
    header, payload, signature = token.split(".")
    assert signature == ""
    assert json.loads(base64.urlsafe_b64decode(header + "==")) == {"alg": "none"}
    return json.loads(base64.urlsafe_b64decode(payload + "=="))  # type: ignore[no-any-return]


def test_unsecured_jwt_from_librdkafka_config() -> None:
    token, expiry, principal, ext = unsecured_jwt(
        "principal=alice scope=read,write lifeSeconds=60 extension_traceId=7", 1000.0
    )
    assert (expiry, principal, ext) == (1060.0, "alice", {"traceId": "7"})
    assert _claims(token) == {"sub": "alice", "iat": 1000.0, "exp": 1060.0, "scope": ["read", "write"]}
    token, _, _, _ = unsecured_jwt("principal=bob principalClaimName=user", 5.0)
    assert _claims(token)["user"] == "bob"


@pytest.mark.parametrize(
    ("config", "why"),
    [
        ("scope=x", "principal"),
        ("principal=a lifeSeconds=-1", "lifeSeconds"),
        ("principal=a bogus=1", "unknown key"),
        ("principal", "key=value"),
    ],
)
def test_unsecured_jwt_config_errors(config: str, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        unsecured_jwt(config, 0.0)
