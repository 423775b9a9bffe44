"""Java truststores read into trusted certificates: JKS as keytool writes it (the judge), PKCS#12
as cryptography writes it, PEM; a wrong password is caught by the store's integrity check."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.serialization import BestAvailableEncryption, Encoding, pkcs12

from kafkawire.security.truststore import trusted_certificates
from tests.harness.certs import make_ca

KEYTOOL = shutil.which("keytool")


@pytest.fixture
def ca_der(tmp_path: Path) -> tuple[Path, bytes]:
    ca = make_ca(tmp_path)
    return ca.cert, ca.certificate.public_bytes(Encoding.DER)


@pytest.mark.skipif(KEYTOOL is None, reason="keytool (Java) is not installed")
def test_jks_made_by_keytool(tmp_path: Path, ca_der: tuple[Path, bytes]) -> None:
    store = tmp_path / "trust.jks"
    subprocess.run(
        [
            str(KEYTOOL),
            "-importcert",
            "-noprompt",
            "-alias",
            "ca",
            "-file",
            str(ca_der[0]),
            "-keystore",
            str(store),
            "-storepass",
            "changeit",
            "-storetype",
            "JKS",
        ],
        check=True,
        capture_output=True,
    )
    assert trusted_certificates(str(store), "changeit", "JKS") == [ca_der[1]]
    assert trusted_certificates(str(store), None, "jks") == [ca_der[1]]  # Java reads it without a password too
    with pytest.raises(ValueError, match="integrity") as exc:
        trusted_certificates(str(store), "wrong-password", "JKS")
    assert "wrong-password" not in str(exc.value)
    truncated = tmp_path / "cut.jks"
    truncated.write_bytes(store.read_bytes()[:40])
    with pytest.raises(ValueError, match="truncated"):
        trusted_certificates(str(truncated), "changeit", "JKS")


def test_pkcs12_and_pem(tmp_path: Path, ca_der: tuple[Path, bytes]) -> None:
    cert = x509.load_der_x509_certificate(ca_der[1])
    p12 = tmp_path / "trust.p12"
    p12.write_bytes(pkcs12.serialize_key_and_certificates(b"ca", None, None, [cert], BestAvailableEncryption(b"pw")))
    assert trusted_certificates(str(p12), "pw", "PKCS12") == [ca_der[1]]
    with pytest.raises(ValueError, match="password"):
        trusted_certificates(str(p12), "nope", "PKCS12")
    assert trusted_certificates(str(ca_der[0]), None, "PEM") == [ca_der[1]]
    with pytest.raises(ValueError, match="not a JKS store"):
        trusted_certificates(str(p12), "pw", "JKS")
