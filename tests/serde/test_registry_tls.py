"""The registry client over TLS (ssl.ca.location, client certificates with an encrypted key)
against the loopback front served by Python's ssl module."""

from __future__ import annotations

import ssl
from pathlib import Path

import httpx
import pytest

from kafkawire.schema_registry import Schema, SchemaRegistryClient
from tests.harness.certs import KEY_PASSWORD, make_ca, make_leaf
from tests.serde.registry_front import registry_front

AVSC = '{"type":"record","name":"T","fields":[{"name":"a","type":"int"}]}'


def _server_context(tmp_path: Path, require_client: bool) -> tuple[ssl.SSLContext, Path, Path, Path]:
    ca = make_ca(tmp_path)
    server = make_leaf(tmp_path, "registry", ca)
    client = make_leaf(tmp_path, "client", ca, client=True)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(server.cert, server.key)
    if require_client:
        ctx.verify_mode = ssl.CERT_REQUIRED
        ctx.load_verify_locations(ca.cert)
    return ctx, ca.cert, client.cert, client.encrypted_key


def test_verified_server_and_client_certificate(tmp_path: Path) -> None:
    ctx, ca, cert, key = _server_context(tmp_path, require_client=True)
    with registry_front(ctx) as front:
        sr = SchemaRegistryClient(
            {
                "url": front.url,
                "ssl.ca.location": str(ca),
                "ssl.certificate.location": str(cert),
                "ssl.key.location": str(key),
                "ssl.key.password": KEY_PASSWORD,
            }
        )
        schema_id = sr.register_schema("tls-value", Schema(AVSC, "AVRO"))
        assert front.registry.get_schema(schema_id).schema_str == AVSC


def test_untrusted_server_is_refused(tmp_path: Path) -> None:
    ctx, _, _, _ = _server_context(tmp_path, require_client=False)
    with registry_front(ctx) as front:
        sr = SchemaRegistryClient({"url": front.url, "max.retries": 0})
        with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            sr.get_subjects()


def test_wrong_key_password_fails_at_construction_without_echoing_it(tmp_path: Path) -> None:
    _, ca, cert, key = _server_context(tmp_path, require_client=False)
    with pytest.raises(ssl.SSLError) as e:
        SchemaRegistryClient(
            {
                "url": "https://127.0.0.1:1",
                "ssl.ca.location": str(ca),
                "ssl.certificate.location": str(cert),
                "ssl.key.location": str(key),
                "ssl.key.password": "not-the-password",
            }
        )
    assert "not-the-password" not in str(e.value)
