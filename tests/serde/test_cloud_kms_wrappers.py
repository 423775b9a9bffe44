"""The Azure Key Vault, Google Cloud KMS and HashiCorp Vault wrappers of the encryption rules, side
by side with confluent-kafka's (both need the SDKs: kafkawire[kms-azure,kms-gcp,kms-hcvault]). No cloud is reached:
what is compared is what happens before a request: key id parsing, the key URIs a client
serves, the AEADs made, the Azure AEAD's saved key version around the vault client it is given
(the caller's own object, the same one to both), every refusal's type and text, and that the
drivers register under their prefixes."""

from __future__ import annotations

import json
import subprocess
import sys
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("azure.keyvault.keys.crypto")
pytest.importorskip("tink.integration.gcpkms")
pytest.importorskip("tink.integration.hcvault")

# (confluent-kafka's azure_driver first: its azure_client imported first meets their import cycle)
from confluent_kafka.schema_registry.rules.encryption.azurekms import azure_driver as their_azure  # isort: skip
from confluent_kafka.schema_registry.rules.encryption import kms_driver_registry as their_registry
from confluent_kafka.schema_registry.rules.encryption.azurekms import azure_aead as their_aead
from confluent_kafka.schema_registry.rules.encryption.azurekms import azure_client as their_azure_client
from confluent_kafka.schema_registry.rules.encryption.gcpkms import gcp_client as their_gcp_client
from confluent_kafka.schema_registry.rules.encryption.gcpkms import gcp_driver as their_gcp
from confluent_kafka.schema_registry.rules.encryption.hcvault import hcvault_client as their_vault_client
from confluent_kafka.schema_registry.rules.encryption.hcvault import hcvault_driver as their_vault
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from kafkawire.schema_registry.rules.encryption import kms_driver_registry as our_registry
from kafkawire.schema_registry.rules.encryption.azurekms import azure_aead as our_aead
from kafkawire.schema_registry.rules.encryption.azurekms import azure_client as our_azure_client
from kafkawire.schema_registry.rules.encryption.azurekms import azure_driver as our_azure
from kafkawire.schema_registry.rules.encryption.gcpkms import gcp_client as our_gcp_client
from kafkawire.schema_registry.rules.encryption.gcpkms import gcp_driver as our_gcp
from kafkawire.schema_registry.rules.encryption.hcvault import hcvault_client as our_vault_client
from kafkawire.schema_registry.rules.encryption.hcvault import hcvault_driver as our_vault

VAULT = "https://myvault.vault.azure.net"
VERSION = "0123456789abcdef0123456789abcdef"
AZURE_IDS = [
    f"{VAULT}/keys/mykey",
    f"{VAULT}/keys/mykey/{VERSION}",
    f"{VAULT}/keys/mykey/",
    f"{VAULT}/secrets/mykey",
    f"{VAULT}/keys",
    f"{VAULT}/keys/a/b/c",
    "myvault.vault.azure.net/keys/mykey",
    "",
]
GCP_KEY = "gcp-kms://projects/p/locations/global/keyRings/r/cryptoKeys/k"


def outcome(call: Callable[..., Any], *args: Any) -> tuple[str, Any]:
    try:
        return "ok", call(*args)
    except Exception as e:
        return type(e).__name__, str(e)


@pytest.mark.parametrize("key_id", AZURE_IDS)
def test_azure_key_ids(key_id: str) -> None:
    for name, call in [
        ("is_versionless", lambda m: m.is_versionless(key_id)),
        ("with_version", lambda m: m.with_version(key_id, "f" * 32)),
        ("versioned", lambda m: m.get_versioned_key_id({}, key_id) if key_id.count("/") == 5 else None),
    ]:
        assert outcome(call, our_azure) == outcome(call, their_azure), name


class VaultKey:
    """The vault's CryptographyClient as AzureKmsAead sees it: the caller's object, given to both
    AEADs alike; wraps by tagging the plaintext with its key version, refuses what it did not wrap."""

    def __init__(self, version: str | None, calls: list[str]) -> None:
        self.version, self.calls = version, calls

    def encrypt(self, algorithm: str, plaintext: bytes) -> Any:
        self.calls.append(f"encrypt {self.version} {algorithm}")
        return types.SimpleNamespace(ciphertext=f"[{self.version}]".encode() + plaintext)

    def decrypt(self, algorithm: str, ciphertext: bytes) -> Any:
        self.calls.append(f"decrypt {self.version} {algorithm}")
        tag = f"[{self.version}]".encode()
        if not ciphertext.startswith(tag):
            raise ValueError(f"not wrapped by {self.version}")
        return types.SimpleNamespace(plaintext=ciphertext[len(tag) :])


def _aead_steps(module: Any) -> list[Any]:
    calls: list[str] = []
    saving = module.AzureKmsAead(
        VaultKey(None, calls), "RSA-OAEP-256", lambda: (VaultKey(VERSION, calls), VERSION), lambda v: VaultKey(v, calls)
    )
    plain = module.AzureKmsAead(VaultKey(None, calls), "RSA-OAEP-256", None, lambda v: VaultKey(v, calls))
    no_factory = module.AzureKmsAead(VaultKey(None, calls), "RSA-OAEP-256")
    bad_target = module.AzureKmsAead(VaultKey(None, calls), "A", lambda: (VaultKey("x", calls), "x" * 32))
    failing_target = module.AzureKmsAead(VaultKey(None, calls), "A", lambda: 1 / 0)
    wrapped = saving.encrypt(b"dek", b"")
    steps: list[Any] = [
        wrapped,
        plain.encrypt(b"dek", b""),
        outcome(lambda: plain.decrypt(wrapped, b"")),
        outcome(lambda: plain.decrypt(b"[None]old", b"")),
        outcome(lambda: plain.decrypt(b"azure:v1:" + b"g" * 32 + b":x", b"")),
        outcome(lambda: plain.decrypt(b"azure:v1:" + VERSION.encode() + b"-x", b"")),  # no ':': not a prefix
        outcome(lambda: plain.decrypt(b"azure:v1:short:x", b"")),
        outcome(lambda: no_factory.decrypt(wrapped, b"")),
        outcome(lambda: no_factory.decrypt(b"[other]x", b"")),
        outcome(lambda: bad_target.encrypt(b"dek", b"")),
        outcome(lambda: failing_target.encrypt(b"dek", b"")),
        outcome(lambda: module.AzureKmsAead(None, "A")),
    ]
    return [*steps, calls]


def test_azure_aead_saves_and_reads_the_key_version_as_confluent_kafkas() -> None:
    ours, theirs = _aead_steps(our_aead), _aead_steps(their_aead)
    assert ours == theirs
    assert ours[0] == b"azure:v1:" + VERSION.encode() + b":[" + VERSION.encode() + b"]dek"


def _azure_client_steps(module: Any, credential: Any) -> list[Any]:
    key = f"azure-kms://{VAULT}/keys/mykey"
    client = module.AzureKmsClient(key, credential, {"encrypt.azure.key.version.save": "true"})
    aead = client.get_aead(key)
    return [
        outcome(lambda: module.AzureKmsClient("aws-kms://x", credential)),
        client.does_support(key),
        client.does_support(key + "/" + VERSION),
        outcome(lambda: client.get_aead(key + "/" + VERSION)),
        type(aead).__name__,
        aead._default_client._key_id.source_id,  # the SDK's client of the key id as given
        aead._client_factory("f" * 32)._key_id.source_id,  # and of a version a DEK names
        module.AZURE_KEYURI_PREFIX,
    ]


def test_azure_client_as_confluent_kafkas() -> None:
    from azure.identity import ClientSecretCredential

    credential = ClientSecretCredential("tenant", "client", "secret")  # makes no request until a token is wanted
    assert _azure_client_steps(our_azure_client, credential) == _azure_client_steps(their_azure_client, credential)


@pytest.fixture
def service_account(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    """A service account of a key made here, also as the application default credentials (the
    SDK reads its file and asks nothing of Google until a request is made)."""
    pem = (
        rsa.generate_private_key(public_exponent=65537, key_size=2048)
        .private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
        .decode()
    )
    info = {
        "client.id": "1",
        "client.email": "sa@p.iam.gserviceaccount.com",
        "private.key.id": "k1",
        "private.key": pem,
    }
    path = tmp_path / "sa.json"
    path.write_text(
        json.dumps(
            {
                "type": "service_account",
                "project_id": "p",
                "client_id": info["client.id"],
                "client_email": info["client.email"],
                "private_key_id": info["private.key.id"],
                "private_key": pem,
                "token_uri": "https://oauth2.googleapis.com/token",
            }
        )
    )
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(path))
    yield info


def _gcp_steps(driver_module: Any, client_module: Any, conf: dict[str, str]) -> list[Any]:
    client = driver_module.GcpKmsDriver().new_kms_client(conf, GCP_KEY)
    aead = client.get_aead(GCP_KEY)
    unbound = client_module._GcpKmsClient(None, None)
    return [
        client.does_support(GCP_KEY),
        client.does_support(GCP_KEY + "2"),
        outcome(lambda: client.get_aead(GCP_KEY + "2")),
        (type(aead).__module__, type(aead).__name__, aead.name, aead.key_version_specified),
        type(client._client).__name__,
        outcome(lambda: client_module._GcpKmsClient("aws-kms://x", None)),
        unbound.does_support(GCP_KEY),
        unbound.does_support("aws-kms://x"),
        outcome(lambda: unbound.get_aead("aws-kms://x")),
        unbound.get_aead(GCP_KEY + "/cryptoKeyVersions/3").key_version_specified,
        outcome(lambda: unbound.get_aead("gcp-kms://projects/p/keyRings/r")),
        client_module.GCP_KEYURI_PREFIX,
    ]


@pytest.mark.parametrize("with_account", [True, False])
def test_gcp_client_as_confluent_kafkas(service_account: dict[str, str], with_account: bool) -> None:
    conf = service_account if with_account else {}
    ours = _gcp_steps(our_gcp, our_gcp_client, conf)
    assert ours == _gcp_steps(their_gcp, their_gcp_client, conf)
    assert ours[3] == ("tink.integration.gcpkms._gcp_kms_client", "_GcpKmsAead", GCP_KEY[10:], False)


def test_gcp_account_type_refused_alike(service_account: dict[str, str]) -> None:
    conf = {**service_account, "account.type": "user"}
    with pytest.raises(Exception, match="service_account") as theirs:
        their_gcp.GcpKmsDriver().new_kms_client(conf, GCP_KEY)
    with pytest.raises(Exception, match="service_account") as ours:
        our_gcp.GcpKmsDriver().new_kms_client(conf, GCP_KEY)
    assert "account.type" in str(ours.value) and "account.type" in str(theirs.value)


VAULT_KEY = "hcvault://https://vault.example:8200/transit/keys/mykey"


def _vault_steps(driver_module: Any, client_module: Any, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    for name in ("VAULT_TOKEN", "VAULT_NAMESPACE", "VAULT_CACERT", "VAULT_CLIENT_CERT", "VAULT_CLIENT_KEY"):
        monkeypatch.delenv(name, raising=False)
    conf = {"token.id": "hvs.t", "namespace": "ns1", "ssl.ca.location": "/ca.pem", "ssl.certificate.location": "/c.pem"}
    client = driver_module.HcVaultKmsDriver().new_kms_client(conf, VAULT_KEY)
    aead = client.get_aead(VAULT_KEY)
    vault = client._client
    direct = client_module.HcVaultKmsClient(VAULT_KEY, None, cert=("/c.pem", "/k.pem"))
    return [
        (
            vault.url,
            vault.token,
            vault.adapter.namespace,
            vault.adapter._kwargs.get("verify"),
            vault.adapter._kwargs.get("cert"),
        ),
        (type(aead).__name__, aead.mount_point, aead.key_name),
        client.does_support(VAULT_KEY),
        client.does_support(VAULT_KEY + "2"),
        outcome(lambda: client.get_aead(VAULT_KEY + "2")),
        outcome(lambda: client_module.HcVaultKmsClient("aws-kms://x", None)),
        direct._client.adapter._kwargs.get("cert"),
        outcome(lambda: driver_module.HcVaultKmsDriver().new_kms_client({"ssl.key.location": "/k.pem"}, VAULT_KEY))[0],
        client_module.VAULT_KEYURI_PREFIX,
    ]


def test_hcvault_client_as_confluent_kafkas(monkeypatch: pytest.MonkeyPatch) -> None:
    ours = _vault_steps(our_vault, our_vault_client, monkeypatch)
    theirs = _vault_steps(their_vault, their_vault_client, monkeypatch)
    # a client key without its certificate: refused by both, ours a RuleError naming the keys
    assert (ours.pop(7), theirs.pop(7)) == ("RuleError", "ValueError")
    assert ours == theirs
    assert ours[1] == ("_HcVaultKmsAead", "transit", "mykey")


def test_drivers_register_under_the_same_prefixes() -> None:
    saved_ours, saved_theirs = dict(our_registry._drivers), list(their_registry._kms_drivers)
    try:
        found = []
        for registry, drivers in (
            (our_registry, (our_azure.AzureKmsDriver, our_gcp.GcpKmsDriver, our_vault.HcVaultKmsDriver)),
            (their_registry, (their_azure.AzureKmsDriver, their_gcp.GcpKmsDriver, their_vault.HcVaultKmsDriver)),
        ):
            registry.reset_kms_drivers()
            for driver in drivers:
                driver.register()
            found.append(
                [
                    (type(registry.get_kms_driver(url)).__name__, registry.get_kms_driver(url).get_key_url_prefix())
                    for url in (f"azure-kms://{VAULT}/keys/k", GCP_KEY, VAULT_KEY)
                ]
            )
        assert (
            found[0]
            == found[1]
            == [
                ("AzureKmsDriver", "azure-kms://"),
                ("GcpKmsDriver", "gcp-kms://"),
                ("HcVaultKmsDriver", "hcvault://"),
            ]
        )
    finally:
        our_registry.reset_kms_drivers()
        our_registry._drivers.update(saved_ours)
        their_registry._kms_drivers[:] = saved_theirs


_WITHOUT_AZURE_SDK = """
import importlib.abc, sys

class NoAzure(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "azure" or name.startswith("azure."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, NoAzure())
from kafkawire.schema_registry.rules.encryption.azurekms.azure_driver import AzureKmsDriver
from kafkawire.schema_registry.rules.encryption.azurekms.azure_client import AzureKmsClient

AzureKmsDriver.register()
uri = "azure-kms://https://myvault.vault.azure.net/keys/k/1"
try:
    AzureKmsClient(uri, None).get_aead(uri)
except ModuleNotFoundError as e:
    print("ours at first use:", e.name, e)
try:
    import confluent_kafka.schema_registry.rules.encryption.azurekms.azure_driver
except ModuleNotFoundError as e:
    print("theirs on import:", e.name)
"""


def test_kept_a_missing_cloud_sdk_fails_at_first_use_not_on_import() -> None:
    """Differs on purpose (README): confluent-kafka's driver modules fail to import without their
    SDK; ours import and register, and the client made for a key names the extra to install."""
    out = subprocess.run(
        [sys.executable, "-c", _WITHOUT_AZURE_SDK], capture_output=True, text=True, check=True, timeout=120
    ).stdout.splitlines()
    assert out[0].startswith("ours at first use: azure") and "pip install kafkawire[kms-azure]" in out[0]
    assert out[1].startswith("theirs on import: azure")
