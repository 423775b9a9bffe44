"""Our SchemaRegistryClient over HTTP against confluent-kafka's registry logic (registry_front.py),
and its HTTP mechanics (retries, fail-over, auth headers) against httpx mocks."""

from __future__ import annotations

import random
from typing import Any

import httpx
import pytest
import respx
from confluent_kafka.schema_registry import SchemaRegistryClient as TheirClient
from confluent_kafka.schema_registry.common import schema_registry_client as theirs

from kafkawire.schema_registry import (
    Metadata,
    MetadataProperties,
    Schema,
    SchemaRegistryClient,
    SchemaRegistryError,
)
from kafkawire.schema_registry.common.schema_registry_client import full_jitter
from tests.harness.token_endpoint import TokenEndpoint
from tests.serde.registry_front import RegistryFront

AVSC = '{"type":"record","name":"User","namespace":"t","fields":[{"name":"name","type":"string"}]}'
AVSC2 = '{"type":"record","name":"User","namespace":"t","fields":[{"name":"name","type":"string"},{"name":"age","type":"int","default":0}]}'


def test_register_lookup_get_as_confluents_registry_answers(front: RegistryFront) -> None:
    sr = SchemaRegistryClient({"url": front.url})
    first = sr.register_schema_full_response("users-value", Schema(AVSC, "AVRO"))
    theirs = front.registry.lookup_schema("users-value", front.registry.get_schema(first.schema_id))
    assert (first.schema_id, first.version, first.guid) == (theirs.schema_id, theirs.version, theirs.guid)
    assert sr.register_schema("users-value", Schema(AVSC, "AVRO")) == first.schema_id
    second = sr.register_schema_full_response("users-value", Schema(AVSC2, "AVRO"))
    assert second.version == 2
    assert sr.get_schema(first.schema_id) == Schema(AVSC, "AVRO")
    assert sr.get_schema_by_guid(str(second.guid)).schema_str == AVSC2
    assert sr.lookup_schema("users-value", Schema(AVSC2, "AVRO")).version == 2
    assert sr.get_latest_version("users-value").schema.schema_str == AVSC2
    assert sr.get_version("users-value", 1).schema_id == first.schema_id
    assert sorted(sr.get_versions("users-value")) == [1, 2]  # confluent's registry keeps no order
    assert sr.get_subjects() == ["users-value"]


def test_cached_answers_cost_no_request(front: RegistryFront) -> None:
    sr = SchemaRegistryClient({"url": front.url})
    schema_id = sr.register_schema("c-value", Schema(AVSC, "AVRO"))
    for _ in range(5):
        sr.register_schema("c-value", Schema(AVSC, "AVRO"))
        sr.get_schema(schema_id)
        sr.get_latest_version("c-value")
    assert sorted(set(front.requests)) == sorted(
        {
            ("POST", "/subjects/c-value/versions"),
            ("GET", f"/schemas/ids/{schema_id}"),
            ("GET", "/subjects/c-value/versions/latest"),
        }
    )
    assert len(front.requests) == 3
    sr.clear_latest_caches()
    sr.get_latest_version("c-value")
    assert len(front.requests) == 4


def test_registry_errors_carry_status_and_code(front: RegistryFront) -> None:
    sr = SchemaRegistryClient({"url": front.url})
    with pytest.raises(SchemaRegistryError) as e:
        sr.get_schema(999)
    assert e.value.http_status_code == 404 and e.value.error_code == front_code(front, 999)
    with pytest.raises(SchemaRegistryError):
        sr.lookup_schema("nobody-value", Schema(AVSC, "AVRO"))


def front_code(front: RegistryFront, schema_id: int) -> int:
    """The code confluent's registry itself gives for an unknown id."""
    from confluent_kafka.schema_registry.error import SchemaRegistryError as Theirs

    try:
        front.registry.get_schema(schema_id)
    except Theirs as e:
        return int(e.error_code)
    raise AssertionError("confluent's registry knew the id")


def test_latest_with_metadata_and_deletes(front: RegistryFront) -> None:
    sr = SchemaRegistryClient({"url": front.url})
    md = Metadata(None, MetadataProperties({"owner": "bob"}), None)
    sr.register_schema("m-value", Schema(AVSC, "AVRO", metadata=md))
    sr.register_schema("m-value", Schema(AVSC2, "AVRO"))
    assert sr.get_latest_with_metadata("m-value", {"owner": "bob"}).schema.schema_str == AVSC
    assert sr.delete_version("m-value", 2) == 2
    assert sr.get_versions("m-value") == [1]
    assert sr.delete_subject("m-value") == [1]


def test_mock_url_gives_the_in_process_registry_shared_by_url() -> None:
    a = SchemaRegistryClient.new_client({"url": "mock://kw-test-shared"})
    b = SchemaRegistryClient.new_client({"url": "mock://kw-test-shared"})
    schema_id = a.register_schema("s-value", Schema(AVSC, "AVRO"))
    assert b.get_schema(schema_id).schema_str == AVSC
    assert b.lookup_schema("s-value", Schema(AVSC, "AVRO")).version == 1
    assert b.delete_subject("s-value", permanent=True) == [1]
    assert a.get_subjects() == []


URL = "http://registry.invalid:8081"


@respx.mock
def test_retries_429_and_5xx_then_succeeds() -> None:
    route = respx.get(f"{URL}/subjects").mock(
        side_effect=[httpx.Response(429), httpx.Response(503), httpx.Response(200, json=["a"])]
    )
    sr = SchemaRegistryClient({"url": URL, "retries.wait.ms": 1, "retries.max.wait.ms": 2})
    assert sr.get_subjects() == ["a"]
    assert route.call_count == 3


def test_full_jitter_is_in_milliseconds_as_confluents() -> None:
    """The public function of confluent-kafka's name and signature means what theirs means."""
    for base, cap, attempt in ((100, 20_000, 0), (100, 20_000, 3), (1000, 1500, 5)):
        random.seed(attempt)
        ours = full_jitter(base, cap, attempt)
        random.seed(attempt)
        assert ours == theirs.full_jitter(base, cap, attempt)


@respx.mock
def test_fails_over_to_the_next_url() -> None:
    respx.get(f"{URL}/subjects").mock(side_effect=httpx.ConnectError("refused"))
    respx.get("http://other.invalid/subjects").mock(return_value=httpx.Response(200, json=["b"]))
    sr = SchemaRegistryClient({"url": f"{URL},http://other.invalid", "max.retries": 1, "retries.wait.ms": 1})
    assert sr.get_subjects() == ["b"]


@respx.mock
def test_static_bearer_token_headers() -> None:
    route = respx.get(f"{URL}/subjects").mock(return_value=httpx.Response(200, json=[]))
    sr = SchemaRegistryClient(
        {
            "url": URL,
            "bearer.auth.credentials.source": "STATIC_TOKEN",
            "bearer.auth.token": "tok-secret",
            "bearer.auth.logical.cluster": "lsrc-1",
            "bearer.auth.identity.pool.id": ["p1", "p2"],
        }
    )
    sr.get_subjects()
    headers = route.calls.last.request.headers
    assert headers["Authorization"] == "Bearer tok-secret"
    assert (headers["target-sr-cluster"], headers["Confluent-Identity-Pool-Id"]) == ("lsrc-1", "p1,p2")
    assert "tok-secret" not in repr(sr._rest_client.bearer_field_provider)


def _custom_fields(config: dict[str, Any]) -> dict[str, Any]:
    return config


BEARER_CONFS: list[dict[str, Any]] = [
    {"bearer.auth.credentials.source": "STATIC_TOKEN", "bearer.auth.token": "t", "bearer.auth.logical.cluster": "c"},
    {"bearer.auth.credentials.source": "STATIC_TOKEN", "bearer.auth.token": "t", "bearer.auth.identity.pool.id": "p"},
    {"bearer.auth.credentials.source": "STATIC_TOKEN", "bearer.auth.logical.cluster": "c"},
    *(
        {
            "bearer.auth.credentials.source": "CUSTOM",
            "bearer.auth.custom.provider.function": _custom_fields,
            "bearer.auth.custom.provider.config": fields,
        }
        for fields in (
            {"bearer.auth.token": "t", "bearer.auth.logical.cluster": "c"},
            {"bearer.auth.token": "t", "bearer.auth.logical.cluster": "c", "bearer.auth.identity.pool.id": "p"},
            {"bearer.auth.token": "t", "bearer.auth.identity.pool.id": "p"},
            {"bearer.auth.logical.cluster": "c"},
        )
    ),
]


@pytest.mark.parametrize("bearer", BEARER_CONFS)
def test_bearer_identity_pool_is_optional_as_confluents(front: RegistryFront, bearer: dict[str, Any]) -> None:
    def sent(client_type: Any) -> Any:
        try:
            client_type({"url": front.url, **bearer}).get_subjects()
        except Exception as e:
            return type(e).__name__, str(e)
        headers = front.headers[-1]
        return [headers.get(h) for h in ("Authorization", "target-sr-cluster", "Confluent-Identity-Pool-Id")]

    assert sent(SchemaRegistryClient) == sent(TheirClient)


@respx.mock
def test_oauth_client_credentials_token_fetched_once_and_sent() -> None:
    api = respx.get(f"{URL}/subjects").mock(return_value=httpx.Response(200, json=[]))
    # The identity provider on loopback (the token client is urllib's: respx does not see it).
    with TokenEndpoint(None, "cid", "csecret", principal="sr-app") as idp:
        sr = SchemaRegistryClient(
            {
                "url": URL,
                "bearer.auth.credentials.source": "OAUTHBEARER",
                "bearer.auth.logical.cluster": "lsrc-1",
                "bearer.auth.identity.pool.id": "pool",
                "bearer.auth.client.id": "cid",
                "bearer.auth.client.secret": "csecret",
                "bearer.auth.scope": "sr",
                "bearer.auth.issuer.endpoint.url": idp.url,
            }
        )
        sr.get_subjects()
        sr.get_subjects()
    assert len(idp.grants) == 1 and idp.grants[0].authorized
    assert idp.grants[0].form == {"grant_type": "client_credentials", "scope": "sr"}
    assert api.calls.last.request.headers["Authorization"] == f"Bearer {idp.grants[0].token}"


def test_config_mistakes_fail_at_construction_naming_the_key() -> None:
    with pytest.raises(ValueError, match="Unrecognized properties: nope"):
        SchemaRegistryClient({"url": URL, "nope": 1})
    with pytest.raises(ValueError, match="Invalid url"):
        SchemaRegistryClient({"url": "ftp://x"})
    with pytest.raises(TypeError, match=r"max\.retries"):
        SchemaRegistryClient({"url": URL, "max.retries": "3"})


def test_async_client_awaits_the_same_calls(front: RegistryFront) -> None:
    import asyncio

    from kafkawire.schema_registry import AsyncSchemaRegistryClient

    async def run() -> tuple[int, str | None, list[str]]:
        async with AsyncSchemaRegistryClient({"url": front.url}) as sr:
            schema_id = await sr.register_schema("a-value", Schema(AVSC, "AVRO"))  # type: ignore[attr-defined]
            got = await sr.get_schema(schema_id)  # type: ignore[attr-defined]
            subjects = await sr.get_subjects()  # type: ignore[attr-defined]
            return schema_id, got.schema_str, subjects

    schema_id, text, subjects = asyncio.run(run())
    assert text == AVSC and subjects == ["a-value"]
    assert front.registry.get_schema(schema_id).schema_str == AVSC


def test_secrets_never_in_errors_or_reprs() -> None:
    with pytest.raises(ValueError) as e:
        SchemaRegistryClient({"url": "htt://user:pa55word@host:1"})
    assert "pa55word" not in str(e.value) and "Invalid url htt://host:1" in str(e.value)
    sr = SchemaRegistryClient({"url": URL, "basic.auth.user.info": "u:pa55word"})
    assert "pa55word" not in repr(sr) + repr(sr._rest_client.config)


def test_the_httpx_the_registry_speaks_through_is_confluent_kafkas() -> None:
    """schema_registry.common._httpx_compat: the same library (httpx2 when installed, else httpx)
    and the same Response and BasicAuth as confluent-kafka's."""
    import confluent_kafka.schema_registry.common._httpx_compat as theirs

    import kafkawire.schema_registry.common._httpx_compat as ours

    assert (ours.httpx, ours.Response, ours.BasicAuth) == (theirs.httpx, theirs.Response, theirs.BasicAuth)
    assert sorted(ours.__all__) == sorted(theirs.__all__)


def _token_failure(module: Any, port: int) -> tuple[str, str, Any]:
    client = module.SchemaRegistryClient(
        {
            "url": f"http://127.0.0.1:{port}",
            "bearer.auth.credentials.source": "OAUTHBEARER",
            "bearer.auth.client.id": "id",
            "bearer.auth.client.secret": "not-shown",
            "bearer.auth.scope": "registry",
            "bearer.auth.issuer.endpoint.url": f"http://127.0.0.1:{port}/token",
            "bearer.auth.logical.cluster": "lsrc-1",
            "bearer.auth.identity.pool.id": "pool-1",
            "max.retries": 1,
            "retries.wait.ms": 1,
            "retries.max.wait.ms": 2,
        }
    )
    try:
        client.get_subjects()
    except Exception as e:
        text = str(e)
        return type(e).__name__, text.split(" due to error: ")[0], (text.endswith("(HTTP None): None"), e.status_code)
    return "ok", "", None


def test_a_token_that_cannot_be_fetched_raises_oauth_token_error_as_confluent_kafka() -> None:
    """The token endpoint refuses connections: after max.retries more tries, OAuthTokenError."""
    import socket

    import confluent_kafka.schema_registry as their_registry

    import kafkawire.schema_registry as our_registry

    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
        outcomes = [_token_failure(our_registry, port), _token_failure(their_registry, port)]
    assert outcomes[0] == outcomes[1] == ("OAuthTokenError", "Failed to retrieve token after 1 attempts", (True, None))
