"""The JWT-bearer grant's assertion (kafkawire/security/jwt_assertion.py): signed RS256/ES256 assertions with
librdkafka's claims, checked here with cryptography's public keys (tests/harness/token_endpoint.py's
check, the one the broker tests' token endpoint applies), and the construction errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from kafkawire import KafkaException
from kafkawire.base.config import CONNECTION_OPTIONS, parse_config
from kafkawire.security.jwt_assertion import JwtAssertion
from tests.harness.token_endpoint import check_assertion

PASSPHRASE = "key-PASSPHRASE"


def _pem(key: Any, passphrase: str | None = None) -> str:
    encryption = (
        serialization.BestAvailableEncryption(passphrase.encode()) if passphrase else serialization.NoEncryption()
    )
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption).decode()


def _config(**conf: Any) -> Any:
    return parse_config({k.replace("_", "."): v for k, v in conf.items()}, CONNECTION_OPTIONS)


def test_an_rs256_assertion_carries_librdkafkas_claims(tmp_path: Path) -> None:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    path = tmp_path / "key.pem"
    path.write_text(_pem(key, PASSPHRASE))
    template = tmp_path / "template.json"
    template.write_text(json.dumps({"header": {"kid": "k1"}, "payload": {"scope": "x", "iat": 1}}))
    assertion = JwtAssertion(
        _config(
            **{
                "sasl.oauthbearer.assertion.private.key.file": str(path),
                "sasl.oauthbearer.assertion.private.key.passphrase": PASSPHRASE,
                "sasl.oauthbearer.assertion.claim.iss": "app",
                "sasl.oauthbearer.assertion.claim.sub": "alice",
                "sasl.oauthbearer.assertion.claim.aud": "https://idp",
                "sasl.oauthbearer.assertion.claim.jti.include": True,
                "sasl.oauthbearer.assertion.jwt.template.file": str(template),
            }
        )
    )
    import time

    header, claims, form, valid = check_assertion(assertion.make(time.time()), key.public_key())
    assert valid and form == "jose"
    assert header == {"kid": "k1", "alg": "RS256", "typ": "JWT"}
    assert claims["exp"] - claims["iat"] == 300 and claims["iat"] - claims["nbf"] == 60
    assert (claims["iss"], claims["sub"], claims["aud"], claims["scope"]) == ("app", "alice", "https://idp", "x")
    assert claims["iat"] != 1 and len(claims["jti"]) == 36
    assert PASSPHRASE not in repr(assertion)


def test_an_es256_assertion_is_signed_in_jws_form() -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    assertion = JwtAssertion(
        _config(
            **{
                "sasl.oauthbearer.assertion.private.key.pem": _pem(key),
                "sasl.oauthbearer.assertion.algorithm": "ES256",
                "sasl.oauthbearer.assertion.claim.exp.seconds": 30,
                "sasl.oauthbearer.assertion.claim.nbf.seconds": 0,
            }
        )
    )
    header, claims, form, _in_time = check_assertion(assertion.make(1_900_000_000.0), key.public_key())
    assert form == "jose" and header["alg"] == "ES256"  # (valid in time only around 2030)
    assert claims == {"iat": 1_900_000_000, "exp": 1_900_000_030, "nbf": 1_900_000_000}
    assert "jti" not in claims


def test_an_assertion_file_is_read_at_each_fetch(tmp_path: Path) -> None:
    path = tmp_path / "assertion.jwt"
    path.write_text("a.b.c\n")
    assertion = JwtAssertion(_config(**{"sasl.oauthbearer.assertion.file": str(path)}))
    assert assertion.make(0) == "a.b.c"
    path.write_text("d.e.f")
    assert assertion.make(0) == "d.e.f"


@pytest.mark.parametrize(
    ("conf", "says"),
    [
        ({}, "needs"),
        ({"sasl.oauthbearer.assertion.private.key.pem": "not a key"}, "no private key could be read"),
        ({"sasl.oauthbearer.assertion.private.key.file": "/nonexistent/key.pem"}, "cannot read"),
    ],
)
def test_assertion_mistakes_fail_at_construction_naming_the_option(conf: dict[str, Any], says: str) -> None:
    with pytest.raises(ValueError, match=says) as e:
        JwtAssertion(_config(**conf))
    assert "sasl.oauthbearer.assertion" in str(e.value)


def test_the_key_must_fit_the_algorithm() -> None:
    rsa_pem = _pem(rsa.generate_private_key(public_exponent=65537, key_size=2048))
    with pytest.raises(ValueError, match="ES256 needs an EC key on P-256"):
        JwtAssertion(
            _config(
                **{
                    "sasl.oauthbearer.assertion.private.key.pem": rsa_pem,
                    "sasl.oauthbearer.assertion.algorithm": "es256",
                }
            )
        )


def test_a_wrong_passphrase_never_shows_the_key_or_passphrase(tmp_path: Path) -> None:
    import kafkawire

    pem = _pem(rsa.generate_private_key(public_exponent=65537, key_size=2048), PASSPHRASE)
    conf = {
        "bootstrap.servers": "127.0.0.1:1",
        "security.protocol": "sasl_plaintext",
        "sasl.mechanism": "OAUTHBEARER",
        "sasl.oauthbearer.method": "oidc",
        "sasl.oauthbearer.token.endpoint.url": "https://127.0.0.1:1/token",
        "sasl.oauthbearer.grant.type": "urn:ietf:params:oauth:grant-type:jwt-bearer",
        "sasl.oauthbearer.assertion.private.key.pem": pem,
        "sasl.oauthbearer.assertion.private.key.passphrase": "wrong-" + PASSPHRASE,
    }
    with pytest.raises(KafkaException) as e:
        kafkawire.Producer(conf)
    text = e.value.args[0].str()
    assert "no private key could be read" in text and PASSPHRASE not in text and "PRIVATE KEY" not in text
