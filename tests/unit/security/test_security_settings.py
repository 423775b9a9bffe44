"""security.protocol / ssl.* / sasl.* checked at construction, naming the key and never echoing a
secret; the SASL conversations a connection gets; credentials and tokens renewed as librdkafka."""

from __future__ import annotations

import base64
import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from kafkawire import KafkaError, KafkaException
from kafkawire.base.config import CONNECTION_OPTIONS, parse_config
from kafkawire.core import sasl
from kafkawire.security import settings as security
from kafkawire.security.settings import SecuritySettings
from tests.harness.certs import make_ca

SECRET = "s3cr3t-Value"


def _never() -> None:
    raise AssertionError("only an OIDC token fetch calls back")


def _key(name: str) -> str:
    return name if name == "oauth_cb" else name.replace("_", ".")


def settings(**conf: Any) -> SecuritySettings:
    return SecuritySettings(parse_config({_key(k): v for k, v in conf.items()}, CONNECTION_OPTIONS))


def error_text(**conf: Any) -> str:
    with pytest.raises(KafkaException) as exc:
        settings(**conf)
    return str(exc.value)


def test_plaintext_by_default_and_protocol_any_case() -> None:
    assert settings().protocol == "plaintext" and settings().tls is None and not settings().uses_sasl
    assert (
        settings(
            security_protocol="SASL_PLAINTEXT", sasl_mechanism="plain", sasl_username="u", sasl_password="p"
        ).mechanism
        == "PLAIN"
    )


def test_unsupported_mechanisms_and_providers_name_what_is_supported() -> None:
    text = error_text(security_protocol="sasl_ssl", sasl_mechanisms="NTLM")
    assert "NTLM" in text and "SCRAM-SHA-512" in text and "GSSAPI" in text and "sasl.mechanism" in text
    assert "ssl.providers" in error_text(ssl_providers="legacy")


def test_gssapi_without_its_package_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "gssapi", None)  # import gssapi raises ImportError
    # GSSAPI is librdkafka's default mechanism: SASL without a mechanism asks for it too.
    for conf in (
        {"security_protocol": "sasl_plaintext"},
        {"security_protocol": "sasl_ssl", "sasl_mechanism": "GSSAPI"},
    ):
        text = error_text(**conf)
        assert "pip install 'kafkawire[gssapi]'" in text and "sasl.mechanism" in text, text


def test_missing_credentials_fail_at_construction() -> None:
    text = error_text(security_protocol="sasl_plaintext", sasl_mechanism="SCRAM-SHA-256", sasl_username="u")
    assert "sasl.password" in text
    assert "oauth_cb" in error_text(security_protocol="sasl_plaintext", sasl_mechanism="OAUTHBEARER")


def test_secrets_never_in_errors_or_repr() -> None:
    texts = [
        error_text(
            security_protocol="sasl_ssl",
            sasl_mechanism="PLAIN",
            sasl_username="u",
            sasl_password=SECRET,
            ssl_ca_location="/nonexistent/ca.pem",
        ),
        error_text(security_protocol="sasl_plaintext", sasl_jaas_config=f"bogus {SECRET}"),
        error_text(
            security_protocol="sasl_plaintext",
            sasl_mechanism="OAUTHBEARER",
            enable_sasl_oauthbearer_unsecure_jwt=True,
            sasl_oauthbearer_config=f"principal=alice nonsense {SECRET}",
        ),
        error_text(
            security_protocol="ssl",
            ssl_key_password=SECRET,
            ssl_certificate_location="/nonexistent/c.pem",
            ssl_key_location="/nonexistent/key.pem",
        ),
    ]
    good = settings(security_protocol="sasl_plaintext", sasl_mechanism="PLAIN", sasl_username="u", sasl_password=SECRET)
    for text in [*texts, repr(good)]:
        assert SECRET not in text


def test_wrong_ca_file_names_the_option() -> None:
    assert "ssl.ca.location" in error_text(security_protocol="ssl", ssl_ca_location="/nonexistent/ca.pem")


def test_tls_context_verifies_host_names_by_default(tmp_path: Path) -> None:
    ca = make_ca(tmp_path)
    strict = settings(security_protocol="ssl", ssl_ca_location=str(ca.cert))
    assert strict.tls is not None and strict.tls.check_hostname
    loose = settings(
        security_protocol="ssl", ssl_ca_location=str(ca.cert), ssl_endpoint_identification_algorithm="none"
    )
    assert loose.tls is not None and not loose.tls.check_hostname


def test_jaas_config_is_an_alias_for_the_credentials() -> None:
    s = settings(
        security_protocol="sasl_ssl",
        sasl_mechanism="SCRAM-SHA-512",
        enable_ssl_certificate_verification=False,
        sasl_jaas_config="org.apache.kafka.common.security.scram.ScramLoginModule required "
        'username="alice" password="a\\"b";',
    )
    client = s.sasl_client(0.0, _never)
    assert isinstance(client, sasl.ScramClient) and b"n=alice" in client.start()
    plain = settings(
        security_protocol="sasl_plaintext",
        sasl_jaas_config=(
            'org.apache.kafka.common.security.plain.PlainLoginModule required username="bob" password="pw";'
        ),
    )
    assert plain.mechanism == "PLAIN" and plain.sasl_client(0.0, _never).start() == b"\x00bob\x00pw"


def test_set_credentials_applies_to_the_next_authentication() -> None:
    s = settings(security_protocol="sasl_plaintext", sasl_mechanism="PLAIN", sasl_username="u", sasl_password="p")
    s.set_credentials("v", "q")
    assert s.sasl_client(0.0, _never).start() == b"\x00v\x00q"
    with pytest.raises(TypeError):
        s.set_credentials("v", None)  # type: ignore[arg-type]


OAUTH = {"security_protocol": "sasl_plaintext", "sasl_mechanism": "OAUTHBEARER", "sasl_oauthbearer_config": "arg"}


def test_oauth_cb_asked_at_construction_and_its_token_used_until_it_expires() -> None:
    calls: list[object] = []

    def oauth_cb(config: object) -> tuple[str, float, str, dict[str, str]]:
        calls.append(config)
        return f"token{len(calls)}", time.time() + 100 * len(calls) ** 2, "alice", {"traceId": "1"}

    s = settings(**OAUTH, oauth_cb=oauth_cb)
    assert calls == ["arg"]  # before any connection, as librdkafka
    first = s.sasl_client(time.time(), _never).start()
    assert b"auth=Bearer token1" in first and b"traceId=1" in first and len(calls) == 1
    # Renewals failed until the token expired: the connection asks the callback itself.
    assert b"token2" in s.sasl_client(time.time() + 150, _never).start() and calls == ["arg", "arg"]


@pytest.mark.parametrize(
    "answer",
    [Exception("no token today"), None, ("token",), (b"token", 1e12), ("token", "soon"), ("token", 1.0)],
)
def test_oauth_cb_failing_or_answering_badly_fails_construction(answer: object) -> None:
    def oauth_cb(_config: object) -> object:
        if isinstance(answer, Exception):
            raise answer
        return answer

    with pytest.raises(KafkaException) as exc:
        settings(**OAUTH, oauth_cb=oauth_cb)
    assert exc.value.args[0].code() == KafkaError._AUTHENTICATION and "oauth_cb" in str(exc.value)


def test_oauth_cb_token_renewed_in_the_background_and_failures_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(security, "RETRY_AFTER", 0.05)
    calls: list[float] = []
    errors: list[KafkaError] = []
    renewed = threading.Event()

    def oauth_cb(_config: object) -> tuple[str, float]:
        calls.append(time.time())
        if len(calls) == 2:
            raise RuntimeError("identity provider down")
        if len(calls) == 4:
            renewed.set()
        return f"token{len(calls)}", time.time() + 0.2  # renewed after 80% of it

    s = settings(**OAUTH, oauth_cb=oauth_cb)
    s.start(errors.append)
    try:
        assert renewed.wait(20)  # asked again, failed, retried, then renewed once more
    finally:
        s.close()
    count = len(calls)
    assert count >= 4 and [e.code() for e in errors] == [KafkaError._AUTHENTICATION]
    assert "identity provider down" in errors[0].str()
    time.sleep(0.3)
    assert len(calls) == count  # closed: no more renewals


def test_unsecured_jwt_for_test_clusters() -> None:
    s = settings(
        security_protocol="sasl_plaintext",
        sasl_mechanism="OAUTHBEARER",
        enable_sasl_oauthbearer_unsecure_jwt=True,
        sasl_oauthbearer_config="principal=alice lifeSeconds=60",
    )
    token = s.sasl_client(50.0, _never).start().split(b"Bearer ")[1].split(b"\x01")[0].decode()
    claims = json.loads(base64.urlsafe_b64decode(token.split(".")[1] + "=="))
    assert claims["sub"] == "alice" and claims["exp"] == 110.0


OIDC = {
    "security_protocol": "sasl_ssl",
    "sasl_mechanism": "OAUTHBEARER",
    "sasl_oauthbearer_method": "oidc",
    "sasl_oauthbearer_client_id": "app",
    "sasl_oauthbearer_client_secret": SECRET,
    "sasl_oauthbearer_token_endpoint_url": "https://idp.example.com/oauth2/token",
}


@pytest.mark.parametrize(
    "change,named",
    [
        ({"sasl_oauthbearer_token_endpoint_url": None}, "sasl.oauthbearer.token.endpoint.url"),
        ({"sasl_oauthbearer_token_endpoint_url": "http://idp.example.com/t"}, "https://"),
        ({"sasl_oauthbearer_client_secret": None}, "sasl.oauthbearer.client.secret"),
        ({"sasl_oauthbearer_client_id": ""}, "sasl.oauthbearer.client.id"),
        ({"sasl_oauthbearer_extensions": "auth=x"}, "alphabetic keys"),
        ({"https_ca_location": "/nonexistent/ca.pem"}, "https.ca.location"),
    ],
)
def test_oidc_settings_checked_at_construction_naming_the_option(change: dict[str, Any], named: str) -> None:
    text = error_text(**{**OIDC, **change})
    assert named in text and "oidc" in text and SECRET not in text


def test_oidc_is_accepted_and_fetches_nothing_until_a_connection_asks() -> None:
    from kafkawire.security.oidc import parse_extensions

    s = settings(**OIDC, sasl_oauthbearer_extensions="traceId=abc,logicalCluster=lkc-1")
    assert s.mechanism == "OAUTHBEARER" and SECRET not in repr(s)
    assert parse_extensions("traceId=abc, logicalCluster=lkc-1") == {"traceId": "abc", "logicalCluster": "lkc-1"}


@pytest.mark.parametrize("face", ["Producer", "Consumer", "AdminClient"])
def test_every_client_asks_oauth_cb_while_built_and_fails_when_it_fails(face: str) -> None:
    import kafkawire
    import kafkawire.admin

    make = kafkawire.admin.AdminClient if face == "AdminClient" else getattr(kafkawire, face)
    calls: list[object] = []

    def oauth_cb(config: object) -> tuple[str, float]:
        calls.append(config)
        if len(calls) > 1:
            raise ValueError("revoked")
        return "token", time.time() + 300

    conf = {
        "bootstrap.servers": "127.0.0.1:1",
        "security.protocol": "sasl_plaintext",
        "sasl.mechanisms": "OAUTHBEARER",
        "sasl.oauthbearer.config": "arg",
        "oauth_cb": oauth_cb,
    }
    if face == "Consumer":
        conf["group.id"] = "g"
    client = make(conf)
    assert calls == ["arg"]
    client.close()
    with pytest.raises(KafkaException, match="revoked"):
        make(conf)
