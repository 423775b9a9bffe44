"""The AWS IAM OAUTHBEARER token provider against confluent-kafka's, without AWS.

Both providers are made from the same configuration strings and ask a loopback endpoint
(``sts_endpoint``) for a token with the same credentials (the environment's) and the same clock
(botocore's, fixed): the signed STS requests they send and the ``oauth_cb`` answers they give must
be identical. The endpoint only records what it is sent and answers with a token the test made:
STS itself cannot be reached from here, and what is judged is each provider's request and answer.
Parsing (``sasl.oauthbearer.config``, ``.extensions``, the JWT's ``sub``) is compared outcome by
outcome, errors included."""

from __future__ import annotations

import base64
import datetime
import http.server
import json
import threading
from collections.abc import Iterator
from typing import Any, ClassVar

import botocore.auth
import pytest
from confluent_kafka._oauthbearer.aws import aws_autowire as ck_autowire
from confluent_kafka._oauthbearer.aws import aws_oauthbearer_config as ck_config
from confluent_kafka._oauthbearer.aws import jwt_extractor as ck_jwt
from confluent_kafka._oauthbearer.aws import sasl_extensions_parser as ck_extensions

import kafkawire
from kafkawire._oauthbearer.aws import aws_autowire as kw_autowire
from kafkawire._oauthbearer.aws import aws_oauthbearer_config as kw_config
from kafkawire._oauthbearer.aws import jwt_extractor as kw_jwt
from kafkawire._oauthbearer.aws import sasl_extensions_parser as kw_extensions

FIXED_NOW = datetime.datetime(2026, 3, 14, 15, 9, 26)  # botocore's clock: naive UTC
EXPIRATION = "2036-03-14T15:14:26Z"  # (librdkafka refuses a token already expired)


def _b64(data: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


JWT = f"{_b64({'alg': 'ES384'})}.{_b64({'sub': 'arn:aws:iam::123456789012:role/app', 'aud': 'x'})}.c2ln"


class _Sts(http.server.BaseHTTPRequestHandler):
    """Records each request; answers GetWebIdentityToken with JWT."""

    seen: ClassVar[list[tuple[str, str, dict[str, str], str]]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode()
        self.seen.append((self.command, self.path, dict(self.headers), body))
        answer = (
            '<GetWebIdentityTokenResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">'
            f"<GetWebIdentityTokenResult><WebIdentityToken>{JWT}</WebIdentityToken>"
            f"<Expiration>{EXPIRATION}</Expiration></GetWebIdentityTokenResult>"
            "<ResponseMetadata><RequestId>r-1</RequestId></ResponseMetadata></GetWebIdentityTokenResponse>"
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/xml")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def sts(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> Iterator[str]:
    """A loopback endpoint, fixed credentials in the environment (nothing else in boto3's chain)
    and botocore's clock fixed."""
    for name, value in {
        "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE",
        "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
        "AWS_SESSION_TOKEN": "session-token",
        "AWS_CONFIG_FILE": str(tmp_path / "none"),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none"),
        "AWS_EC2_METADATA_DISABLED": "true",
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda *a, **k: FIXED_NOW)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Sts)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _Sts.seen = []
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _comparable(request: tuple[str, str, dict[str, str], str]) -> tuple[Any, ...]:
    """A request as the comparison sees it: botocore's per-call random invocation id left out
    (it is not signed) and the User-Agent, which names the calling library's frames, kept."""
    method, path, headers, body = request
    headers = {k.lower(): v for k, v in headers.items() if k.lower() != "amz-sdk-invocation-id"}
    return method, path, headers, body


@pytest.mark.parametrize(
    "config, extensions",
    [
        ("region=us-east-1,audience=https://confluent.cloud/oidc", None),
        (
            "region=eu-west-1,audience=aud\\,with\\,commas,duration_seconds=900,signing_algorithm=RS256,"
            "tag_team=platform,tag_env=prod,aws_debug=NONE",
            "logicalCluster=lkc-abc,identityPoolId=pool-1\\,pool-2",
        ),
    ],
)
def test_the_signed_request_and_the_token_are_confluent_kafkas(sts: str, config: str, extensions: str | None) -> None:
    config += f",sts_endpoint={sts}"
    ours = kw_autowire.create_handler(config, extensions)(config)
    ours_requests = list(_Sts.seen)
    _Sts.seen.clear()
    theirs = ck_autowire.create_handler(config, extensions)(config)
    theirs_requests = list(_Sts.seen)
    assert ours == theirs
    assert ours[0] == JWT and ours[2] == "arn:aws:iam::123456789012:role/app"
    assert ours[1] == datetime.datetime(2036, 3, 14, 15, 14, 26, tzinfo=datetime.timezone.utc).timestamp()
    assert len(ours_requests) == len(theirs_requests) == 1
    assert [_comparable(r) for r in ours_requests] == [_comparable(r) for r in theirs_requests]
    assert "Signature=" in ours_requests[0][2]["Authorization"]  # signed, the signature compared above


CONFIGS = [
    "",
    "region=us-east-1",
    "audience=a",
    "region=us-east-1,audience=a",
    "region=,audience=a",
    "region=r,audience=a,duration_seconds=59",
    "region=r,audience=a,duration_seconds=3600",
    "region=r,audience=a,duration_seconds=3601",
    "region=r,audience=a,duration_seconds=x",
    "region=r,audience=a,duration_seconds= 120 ",
    "region=r,audience=a,signing_algorithm=HS256",
    "region=r,audience=a,aws_debug=Console",
    "region=r,audience=a,aws_debug=loud",
    "region=r,audience=a,sts_endpoint=",
    "region=r,audience=a,tag_=x",
    "region=r,audience=a,extension_logicalCluster=x",
    "region=r,audience=a,bogus",
    "region=r,audience=a,=x",
    " region = r ,audience=a",
    "region=r\\,s,audience=a=b=c,,, ",
    "region=r,audience=a," + ",".join(f"tag_t{i}=v" for i in range(51)),
    "region=r,audience=a,tag_x=1,tag_x=2,region=q",
]


def _parse_outcome(config_module: Any, extensions_module: Any, raw: Any, ext: Any) -> Any:
    try:
        parsed = config_module.AwsOAuthBearerConfig.parse(raw, extensions_module.parse(ext))
    except Exception as e:
        return (type(e).__name__, str(e))
    return {k: getattr(parsed, k) for k in parsed.__dataclass_fields__}


@pytest.mark.parametrize("raw", [*CONFIGS, None])
@pytest.mark.parametrize("ext", [None, "", "a=1", "a=1,a=2,b=\\,x", "noequals", ",,"])
def test_configuration_parsing_as_confluent_kafkas(raw: Any, ext: Any) -> None:
    assert _parse_outcome(kw_config, kw_extensions, raw, ext) == _parse_outcome(ck_config, ck_extensions, raw, ext)


def test_the_configuration_values_check_as_confluent_kafkas() -> None:
    def outcomes(module: Any) -> list[Any]:
        out = []
        for fields in (
            {"region": "r", "audience": "a", "duration_seconds": True},
            {"region": "r", "audience": "a", "duration_seconds": 60.0},
            {"region": 1, "audience": "a"},
            {"region": "r", "audience": "a", "tags": ["x"]},
            {"region": "r", "audience": "a", "sasl_extensions": "x"},
            {"region": "r", "audience": "a", "sts_endpoint": "https://sts"},
        ):
            try:
                made = module.AwsOAuthBearerConfig(**fields)
                out.append(("ok", made.sts_endpoint, made.duration_seconds))
            except Exception as e:
                out.append((type(e).__name__, str(e)))
        return out

    assert outcomes(kw_config) == outcomes(ck_config)
    names = [n for n in ck_config.__all__ if n != "AwsOAuthBearerConfig"]
    assert {n: getattr(kw_config, n) for n in names} == {n: getattr(ck_config, n) for n in names}


@pytest.mark.parametrize(
    "jwt",
    [
        JWT,
        None,
        "",
        "a.b",
        "a.b.c.d",
        "x" * 8193,
        "a..c",
        "a.Zm9v.c",  # "foo": not JSON
        f"a.{_b64([1])}.c",  # type: ignore[arg-type]
        f"a.{_b64({'sub': 3})}.c",
        f"a.{_b64({'sub': ''})}.c",
        f"a.{_b64({'other': 'x'})}.c",
        "a.Zm9vY.c",  # a length that is no base64url
        "a.!!!!.c",
        "a.__8.c",  # bytes that are not UTF-8
        f"a.{_b64({'sub': 'ünï'})}.c",
    ],
)
def test_the_principal_is_read_as_confluent_kafka_reads_it(jwt: Any) -> None:
    def outcome(module: Any) -> Any:
        try:
            return module.extract_sub(jwt)
        except Exception as e:
            return (type(e).__name__, str(e).split(":")[0])

    assert outcome(kw_jwt) == outcome(ck_jwt)


def test_create_handler_refuses_what_confluent_kafkas_refuses() -> None:
    def outcome(module: Any, *args: Any) -> Any:
        try:
            module.create_handler(*args)
        except Exception as e:
            return (type(e).__name__, str(e).replace("confluent-kafka", "kafkawire"))
        return "made"

    for args in (("", None), (None, None), ("region=r", None), ("region=r,audience=a", "bad")):
        assert outcome(kw_autowire, *args) == outcome(ck_autowire, *args)


def _construct(module: Any, conf: dict[str, Any]) -> Any:
    try:
        client = module.Producer(conf)
    except Exception as e:
        return (type(e).__name__, str(e).replace("confluent-kafka", "kafkawire"))
    client.flush(0)
    return "made"


def test_clients_wire_the_provider_from_configuration_as_confluent_kafka_does(sts: str) -> None:
    import confluent_kafka

    base = {"bootstrap.servers": "127.0.0.1:9", "sasl.oauthbearer.metadata.authentication.type": "aws_iam"}
    good = f"region=us-east-1,audience=a,sts_endpoint={sts}"
    cases = [
        {},  # no method
        {"sasl.oauthbearer.method": "default"},
        {"sasl.oauthbearer.method": "oidc"},  # no sasl.oauthbearer.config
        {"sasl.oauthbearer.method": "oidc", "sasl.oauthbearer.config": "region=r"},
        {
            "sasl.oauthbearer.method": "oidc",
            "sasl.oauthbearer.config": good,
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanisms": "OAUTHBEARER",
        },
    ]
    for case in cases:
        conf = {**base, **case}
        ours, theirs = _construct(kafkawire, conf), _construct(confluent_kafka, conf)
        if case.get("sasl.oauthbearer.method", "default") == "default":
            # The message names the value, or "<unset>" there: kafkawire's parsed configuration
            # holds the default whether or not it was given.
            assert ours[0] == theirs[0] == "ValueError"
            assert ours[1].split("Current value")[0] == theirs[1].split("Current value")[0]
        else:
            assert ours == theirs, case
    assert len(_Sts.seen) == 2  # the last case's first token, asked for while each client was made


def test_a_sasl_client_authenticates_with_the_providers_token(sts: str) -> None:
    """The token the provider mints, with the configured extensions, is what the client's
    OAUTHBEARER conversation sends (the first asked for while the client is made, as librdkafka)."""
    import time

    from kafkawire.base.config import CONNECTION_OPTIONS, parse_config
    from kafkawire.security.settings import SecuritySettings

    conf = {
        "bootstrap.servers": "127.0.0.1:9",
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanisms": "OAUTHBEARER",
        "sasl.oauthbearer.method": "oidc",
        "sasl.oauthbearer.metadata.authentication.type": "aws_iam",
        "sasl.oauthbearer.config": f"region=us-east-1,audience=a,sts_endpoint={sts}",
        "sasl.oauthbearer.extensions": "logicalCluster=lkc-1",
    }
    settings = SecuritySettings(parse_config(conf, CONNECTION_OPTIONS, ignore_unknown=True))
    client = settings.sasl_client(time.time(), lambda: None)
    assert client is not None
    first = client.start()
    assert first == f"n,,\x01auth=Bearer {JWT}\x01logicalCluster=lkc-1\x01\x01".encode()
    assert len(_Sts.seen) == 1
