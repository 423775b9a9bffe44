"""The keys of the encryption rules: the DEK registry clients (REST and in process) and the KMS
drivers. No cloud can be reached here, so the cloud drivers are checked for their configuration (keys, environment fallbacks, refusals, no secret in a repr), the
error naming the extra to install when their SDK is missing, and how they drive stand-in SDK
modules (the Azure driver's saved key version included)."""

from __future__ import annotations

import sys
import types
import uuid
from typing import Any

import httpx
import pytest
import respx

from kafkawire.schema_registry.common.rules import RuleError
from kafkawire.schema_registry.rules.encryption.awskms.aws_driver import AwsKmsDriver, aws_settings
from kafkawire.schema_registry.rules.encryption.azurekms.azure_driver import AzureKmsDriver
from kafkawire.schema_registry.rules.encryption.azurekms.key_vault import azure_settings, parse_key_id
from kafkawire.schema_registry.rules.encryption.dek_registry.dek_registry_client import DekAlgorithm, DekRegistryClient
from kafkawire.schema_registry.rules.encryption.gcpkms.gcp_driver import GcpKmsDriver, gcp_settings
from kafkawire.schema_registry.rules.encryption.hcvault.hcvault_driver import HcVaultKmsDriver, hcvault_settings
from kafkawire.schema_registry.rules.encryption.kms_driver_registry import KmsDriver, get_kms_driver
from kafkawire.schema_registry.rules.encryption.localkms.local_driver import LocalKmsDriver

SUBJECT = "topic1-value"
URL = "http://registry.test"


def mock_url() -> str:
    return f"mock://{uuid.uuid4()}"


def test_mock_dek_registry_is_one_store_per_url() -> None:
    url = mock_url()
    a, b, other = (DekRegistryClient.new_client({"url": u}) for u in (url, url, mock_url()))
    a.register_kek("k", "local-kms", "id")
    assert b.get_kek("k").kms_key_id == "id"
    with pytest.raises(Exception, match="not found"):
        other.get_kek("k")
    assert a.register_kek("k", "local-kms", "id").name == "k"  # the same KEK again: no conflict
    with pytest.raises(Exception, match="already exists"):
        DekRegistryClient.new_client({"url": url}).register_kek("k", "local-kms", "another")
    a.register_dek("k", SUBJECT, "ZW5j", version=1)
    a.register_dek("k", SUBJECT, "ZW5jMg==", version=2)
    assert b.get_dek_latest_version("k", SUBJECT).version == 2
    with pytest.raises(Exception, match="already exists"):
        b.register_dek("k", SUBJECT, "b3RoZXI=", version=1)
    with pytest.raises(Exception, match="not found"):
        b.get_dek("k", SUBJECT, DekAlgorithm.AES256_SIV)
    with pytest.raises(Exception, match="encryptedKeyMaterial is required"):
        b.register_dek("k", "other-value", None)


@respx.mock
def test_rest_client_paths_caches_and_the_older_dek_path() -> None:
    kek = {"name": "k/1", "kmsType": "local-kms", "kmsKeyId": "id", "shared": False, "ts": 1, "deleted": False}
    dek = {
        "kekName": "k/1",
        "subject": SUBJECT,
        "version": 2,
        "algorithm": "AES256_SIV",
        "encryptedKeyMaterial": "ZQ==",
    }
    create_kek = respx.post(f"{URL}/dek-registry/v1/keks", params={"context": ".ctx"}).mock(
        httpx.Response(200, json=kek)
    )
    get_kek = respx.get(f"{URL}/dek-registry/v1/keks/k%2F1").mock(httpx.Response(200, json=kek))
    newer = respx.post(f"{URL}/dek-registry/v1/keks/k%2F1/deks/{SUBJECT}").mock(httpx.Response(405, json={}))
    older = respx.post(f"{URL}/dek-registry/v1/keks/k%2F1/deks").mock(httpx.Response(200, json=dek))
    latest = respx.get(f"{URL}/dek-registry/v1/keks/k%2F1/deks/{SUBJECT}/versions/-1").mock(
        httpx.Response(200, json=dek)
    )
    client = DekRegistryClient.new_client({"url": URL})
    assert type(client) is DekRegistryClient
    assert client.register_kek("k/1", "local-kms", "id", context=".ctx").kms_key_id == "id"
    assert client.get_kek("k/1").name == client.get_kek("k/1").name == "k/1"
    assert create_kek.calls[0].request.read() == b'{"name":"k/1","kmsType":"local-kms","kmsKeyId":"id","shared":false}'
    assert get_kek.call_count == 1 and get_kek.calls[0].request.url.params["deleted"] == "false"
    registered = client.register_dek("k/1", SUBJECT, "ZQ==", DekAlgorithm.AES256_SIV, 2)
    assert newer.call_count == older.call_count == 1 and registered.version == 2
    assert client.get_dek_latest_version("k/1", SUBJECT, DekAlgorithm.AES256_SIV).version == 2
    assert latest.calls[0].request.url.params["algorithm"] == "AES256_SIV"
    assert client.get_dek("k/1", SUBJECT, DekAlgorithm.AES256_SIV, 2) is client.get_dek_latest_version(
        "k/1", SUBJECT, DekAlgorithm.AES256_SIV
    )  # one object per version, the latest included
    respx.get(f"{URL}/dek-registry/v1/keks/nope").mock(
        httpx.Response(404, json={"error_code": 40470, "message": "Key nope not found"})
    )
    with pytest.raises(Exception, match="Key nope not found") as e:
        client.get_kek("nope")
    assert getattr(e.value, "http_status_code", None) == 404


def test_drivers_are_found_by_key_url_prefix() -> None:
    for driver in (AwsKmsDriver, AzureKmsDriver, GcpKmsDriver, HcVaultKmsDriver, LocalKmsDriver):
        registered = driver.register()
        assert get_kms_driver(registered.get_key_url_prefix() + "key") is registered
    with pytest.raises(RuleError, match="no KMS driver"):
        get_kms_driver("nope://key")


AWS_KEY = "aws-kms://arn:aws:kms:us-west-2:111122223333:key/1234abcd"
AZURE_KEY = "azure-kms://https://myvault.vault.azure.net/keys/mykey"
GCP_KEY = "gcp-kms://projects/p/locations/global/keyRings/r/cryptoKeys/k"
VAULT_KEY = "hcvault://https://vault.example:8200/transit/keys/mykey"


@pytest.mark.parametrize(
    ("driver", "key_url", "sdk", "extra"),
    [
        (AwsKmsDriver(), AWS_KEY, "boto3", "kms-aws"),
        (AzureKmsDriver(), AZURE_KEY, "azure.identity", "kms-azure"),
        (GcpKmsDriver(), GCP_KEY, "google.cloud.kms_v1", "kms-gcp"),
        (HcVaultKmsDriver(), VAULT_KEY, "hvac", "kms-hcvault"),
    ],
)
def test_missing_sdk_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, driver: KmsDriver, key_url: str, sdk: str, extra: str
) -> None:
    monkeypatch.setitem(sys.modules, sdk, None)
    with pytest.raises(ImportError, match=rf"pip install kafkawire\[{extra}\]"):
        driver.new_kms_client({}, key_url)


def test_aws_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AWS_ROLE_ARN", raising=False)
    monkeypatch.delenv("AWS_WEB_IDENTITY_TOKEN_FILE", raising=False)
    s = aws_settings({"access.key.id": "AKIA", "secret.access.key": "s3cr3t"}, AWS_KEY)
    assert (s.region, s.access_key_id, s.role_arn, s.role_session_name) == (
        "us-west-2",
        "AKIA",
        None,
        "confluent-encrypt",
    )
    assert "s3cr3t" not in repr(s)
    monkeypatch.setenv("AWS_ROLE_ARN", "arn:aws:iam::1:role/r")
    s = aws_settings({"profile": "dev", "role.session.name": "mine"}, AWS_KEY)
    assert (s.profile, s.role_arn, s.role_session_name) == ("dev", "arn:aws:iam::1:role/r", "mine")
    with pytest.raises(RuleError, match="together"):
        aws_settings({"access.key.id": "AKIA"}, AWS_KEY)
    with pytest.raises(RuleError, match="not an AWS KMS key ARN"):
        aws_settings({}, "aws-kms://mykey")


def test_aws_client_is_made_with_the_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AWS_ROLE_ARN", raising=False)
    sessions: list[dict[str, Any]] = []

    class Session:
        def __init__(self, **kwargs: Any) -> None:
            sessions.append(kwargs)

        def client(self, name: str) -> str:
            return f"{name}-client"

    monkeypatch.setitem(sys.modules, "boto3", types.SimpleNamespace(Session=Session))
    awskms = types.SimpleNamespace(new_client=lambda boto3_client, key_uri: ("tink-client", boto3_client, key_uri))
    monkeypatch.setitem(sys.modules, "tink.integration.awskms", awskms)
    client = AwsKmsDriver().new_kms_client({"profile": "dev"}, AWS_KEY)
    assert client == ("tink-client", "kms-client", AWS_KEY)
    assert sessions == [{"region_name": "us-west-2", "profile_name": "dev"}]


def test_azure_settings() -> None:
    s = azure_settings({"tenant.id": "t", "client.id": "c", "client.secret": "s3cr3t"})
    assert (s.tenant_id, s.client_id) == ("t", "c")
    assert "s3cr3t" not in repr(s)
    assert parse_key_id(AZURE_KEY[12:] + "/" + "a" * 32) == ("https://myvault.vault.azure.net", "mykey", "a" * 32)
    with pytest.raises(RuleError, match=r"also needs client\.secret"):
        azure_settings({"tenant.id": "t", "client.id": "c"})
    with pytest.raises(Exception, match="invalid Azure Key Vault key id"):
        parse_key_id("https://myvault.vault.azure.net/secrets/x")


def test_azure_saves_the_key_version_in_the_wrapped_dek(monkeypatch: pytest.MonkeyPatch) -> None:
    version = "0123456789abcdef0123456789abcdef"
    used: list[str] = []

    class CryptographyClient:
        def __init__(self, key_id: str, credential: Any) -> None:
            self.key_id = key_id

        def encrypt(self, algorithm: str, plaintext: bytes) -> Any:
            used.append(self.key_id)
            return types.SimpleNamespace(ciphertext=b"rsa(" + plaintext + b")")

        def decrypt(self, algorithm: str, ciphertext: bytes) -> Any:
            used.append(self.key_id)
            return types.SimpleNamespace(plaintext=ciphertext[4:-1])

    class KeyClient:
        def __init__(self, vault_url: str, credential: Any) -> None:
            pass

        def get_key(self, name: str) -> Any:
            return types.SimpleNamespace(id=f"{AZURE_KEY[12:]}/{version}")

    fakes = {
        "azure.identity": types.SimpleNamespace(DefaultAzureCredential=lambda: "cred", ClientSecretCredential=None),
        "azure.keyvault.keys": types.SimpleNamespace(KeyClient=KeyClient),
        "azure.keyvault.keys.crypto": types.SimpleNamespace(
            CryptographyClient=CryptographyClient,
            EncryptionAlgorithm=types.SimpleNamespace(rsa_oaep_256="RSA-OAEP-256"),
        ),
    }
    for name, module in fakes.items():
        monkeypatch.setitem(sys.modules, name, module)
    saving = AzureKmsDriver().new_kms_client({"encrypt.azure.key.version.save": "true"}, AZURE_KEY).get_aead(AZURE_KEY)
    wrapped = saving.encrypt(b"dek", b"")
    assert wrapped == b"azure:v1:" + version.encode() + b":rsa(dek)"
    plain = AzureKmsDriver().new_kms_client({}, AZURE_KEY).get_aead(AZURE_KEY)
    assert plain.decrypt(wrapped, b"") == b"dek"  # the saved version is used, whatever the setting
    assert plain.decrypt(b"rsa(old)", b"") == b"old"
    assert used == [f"{AZURE_KEY[12:]}/{version}", f"{AZURE_KEY[12:]}/{version}", AZURE_KEY[12:]]
    with pytest.raises(Exception, match="invalid azure:v1: key version"):
        plain.decrypt(b"azure:v1:" + b"g" * 32 + b":x", b"")


def test_gcp_settings() -> None:
    account = {"client.id": "1", "client.email": "a@p.iam", "private.key.id": "k", "private.key": "-----PRIVATE-----"}
    s = gcp_settings(account, GCP_KEY)
    assert s.service_account is not None and s.service_account["token_uri"] == "https://oauth2.googleapis.com/token"
    assert s.service_account["type"] == "service_account" and "PRIVATE" not in repr(s)
    assert gcp_settings({}, GCP_KEY).service_account is None  # application default credentials
    with pytest.raises(RuleError, match=r"also needs private\.key"):
        gcp_settings({k: v for k, v in account.items() if k != "private.key"}, GCP_KEY)
    with pytest.raises(RuleError, match="service_account"):
        gcp_settings({"account.type": "user"}, GCP_KEY)
    with pytest.raises(RuleError, match="not a Cloud KMS key"):
        gcp_settings({}, "gcp-kms://projects/p/keyRings/r")


def test_hcvault_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("VAULT_NAMESPACE", "VAULT_CLIENT_CERT", "VAULT_CLIENT_KEY", "VAULT_APPROLE_ROLE_ID"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("VAULT_TOKEN", "hvs.t0ken")
    monkeypatch.setenv("VAULT_CACERT", "")  # empty: still verified, against the system CAs
    s = hcvault_settings({"ssl.certificate.location": "c.pem", "ssl.key.location": "k.pem"}, VAULT_KEY)
    assert (s.vault_url, s.key_path, s.token, s.verify) == (
        "https://vault.example:8200",
        "/transit/keys/mykey",
        "hvs.t0ken",
        True,
    )
    assert s.cert == ("c.pem", "k.pem") and "hvs.t0ken" not in repr(s)
    assert hcvault_settings({"ssl.ca.location": "ca.pem", "token.id": "x"}, VAULT_KEY).verify == "ca.pem"
    with pytest.raises(RuleError, match=r"ssl\.certificate\.location required"):
        hcvault_settings({"ssl.key.location": "k.pem"}, VAULT_KEY)
    with pytest.raises(RuleError, match="not a Vault transit key"):
        hcvault_settings({}, "hcvault://vault.example/transit/mykey")


def test_local_kms_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LOCAL_SECRET", raising=False)
    client = LocalKmsDriver().new_kms_client({"secret": "s3cr3t"}, "local-kms://k")
    assert "s3cr3t" not in repr(client) and "s3cr3t" not in repr(vars(client))
    wrapped = client.get_aead("local-kms://k").encrypt(b"dek", b"")
    monkeypatch.setenv("LOCAL_SECRET", "s3cr3t")
    assert (
        LocalKmsDriver().new_kms_client({}, "local-kms://other").get_aead("local-kms://other").decrypt(wrapped, b"")
        == b"dek"
    )
    with pytest.raises(RuleError, match="must be a str"):
        LocalKmsDriver().new_kms_client({"secret": 42}, "local-kms://k")
    with pytest.raises(RuleError, match="serves local-kms:// keys"):
        client.get_aead("aws-kms://k")


def _request_bodies(module: Any) -> list[Any]:
    kek = module.CreateKekRequest("k", "local-kms", "key-1", module.KekKmsProps.from_dict({"a": "b"}), None, True)
    dek = module.CreateDekRequest("orders-value", 2, module.DekAlgorithm.AES256_SIV, "d3JhcHBlZA==")
    bare = module.CreateDekRequest("s", None, None, None)
    return [
        kek.to_dict(),
        module.CreateKekRequest.from_dict(kek.to_dict()) == kek,
        module.CreateKekRequest.from_dict({"name": "x", "extra": 1}).to_dict(),
        dek.to_dict(),
        module.CreateDekRequest.from_dict(dek.to_dict()) == dek,
        bare.to_dict(),
        repr(module.CreateDekRequest.from_dict({"subject": "s", "algorithm": "AES128_GCM"})).split("(", 1)[1],
    ]


def test_create_request_bodies_as_confluent_kafkas() -> None:
    from confluent_kafka.schema_registry.rules.encryption.dek_registry import dek_registry_client as theirs

    from kafkawire.schema_registry.rules.encryption.dek_registry import dek_registry_client as ours

    assert _request_bodies(ours) == _request_bodies(theirs)


def test_reset_kms_drivers_as_confluent_kafkas() -> None:
    """Both registries forget every driver: a key URL then has none, on either library."""
    from confluent_kafka.schema_registry.rules.encryption import kms_driver_registry as their_registry
    from confluent_kafka.schema_registry.rules.encryption.localkms.local_driver import (
        LocalKmsDriver as TheirLocalKmsDriver,
    )

    from kafkawire.schema_registry.rules.encryption import kms_driver_registry as our_registry

    saved_ours, saved_theirs = dict(our_registry._drivers), list(their_registry._kms_drivers)
    try:
        outcomes = []
        for registry, driver in ((our_registry, LocalKmsDriver), (their_registry, TheirLocalKmsDriver)):
            driver.register()
            found = type(registry.get_kms_driver("local-kms://k")).__name__
            registry.reset_kms_drivers()
            try:
                registry.get_kms_driver("local-kms://k")
                after = "found"
            except Exception as e:
                after = type(e).__name__
            outcomes.append((found, after))
        assert outcomes[0] == outcomes[1] == ("LocalKmsDriver", "RuleError")
    finally:
        our_registry._drivers.update(saved_ours)
        their_registry._kms_drivers[:] = saved_theirs


def test_local_kms_client_as_confluent_kafkas() -> None:
    """Made directly, as confluent-kafka's local_client.LocalKmsClient is: refuses no secret alike,
    serves the same key URIs, and each unwraps what the other wrapped."""
    from confluent_kafka.schema_registry.rules.encryption.localkms.local_client import (
        LocalKmsClient as TheirLocalKmsClient,
    )

    from kafkawire.schema_registry.rules.encryption.localkms.local_driver import LocalKmsClient

    found = []
    for make in (LocalKmsClient, TheirLocalKmsClient):
        try:
            make()
            refusal = None
        except Exception as e:
            refusal = (type(e).__name__, str(e))
        client = make("s3cr3t")
        found.append([refusal, client.does_support("local-kms://k"), client.does_support("aws-kms://k")])
    assert found[0] == found[1] == [("TypeError", "secret cannot be None"), True, False]
    ours, theirs = (
        LocalKmsClient("s3cr3t").get_aead("local-kms://k"),
        TheirLocalKmsClient("s3cr3t").get_aead("local-kms://k"),
    )
    assert theirs.decrypt(ours.encrypt(b"dek", b""), b"") == ours.decrypt(theirs.encrypt(b"dek", b""), b"") == b"dek"
