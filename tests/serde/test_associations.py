"""The association API (subjects bound to topics) and the ASSOCIATED subject name strategy.

Over HTTP our client is judged by confluent-kafka's registry logic (registry_front.py) and its
request shapes by httpx mocks; the in-process ``mock://`` registry by the association rules
confluent's Schema Registry documents (lifecycles, frozen associations, cascading deletes).
"""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import httpx
import pytest
import respx
from confluent_kafka.schema_registry import (
    AssociationCreateOrUpdateInfo as TheirInfo,
)
from confluent_kafka.schema_registry import (
    AssociationCreateOrUpdateRequest as TheirRequest,
)
from confluent_kafka.schema_registry import Schema as TheirSchema

from kafkawire.schema_registry import (
    AssociationCreateOrUpdateInfo,
    AssociationCreateOrUpdateRequest,
    AsyncSchemaRegistryClient,
    Schema,
    SchemaRegistryClient,
    SchemaRegistryError,
)
from kafkawire.schema_registry._sync.serde import FALLBACK_TYPE, KAFKA_CLUSTER_ID, AssociatedNameStrategy
from kafkawire.schema_registry.avro import AvroDeserializer, AvroSerializer
from kafkawire.schema_registry.common.serde import SubjectNameStrategyType
from kafkawire.serialization import MessageField, SerializationContext, SerializationError
from tests.serde.registry_front import RegistryFront

AVSC = '{"type":"record","name":"Order","namespace":"shop","fields":[{"name":"id","type":"long"}]}'
ASSOCIATED = {"subject.name.strategy.type": SubjectNameStrategyType.ASSOCIATED}
VALUE = SerializationContext("orders", MessageField.VALUE)


def mock_client() -> SchemaRegistryClient:
    """A client of a registry of its own (``mock://`` registries live as long as the process)."""
    return SchemaRegistryClient.new_client({"url": f"mock://assoc-{uuid.uuid4()}"})


def request(
    resource_id: str, *infos: AssociationCreateOrUpdateInfo, name: str = "orders", namespace: str = "lkc-1"
) -> AssociationCreateOrUpdateRequest:
    return AssociationCreateOrUpdateRequest(name, namespace, resource_id, "topic", list(infos))


def strong(
    subject: str, kind: str = "value", schema: Schema | None = None, frozen: bool | None = None
) -> AssociationCreateOrUpdateInfo:
    return AssociationCreateOrUpdateInfo(subject, kind, "STRONG", frozen, schema)


def weak(subject: str, kind: str = "value") -> AssociationCreateOrUpdateInfo:
    return AssociationCreateOrUpdateInfo(subject, kind, "WEAK")


def status(e: pytest.ExceptionInfo[SchemaRegistryError]) -> tuple[int, int]:
    return e.value.http_status_code, e.value.error_code


# --- the REST client ------------------------------------------------------------------------------


def test_rest_create_list_delete_as_confluents_registry_answers(front: RegistryFront) -> None:
    sr = SchemaRegistryClient({"url": front.url})
    sr.register_schema("orders-main", Schema(AVSC, "AVRO"))
    created = sr.create_association(request("r-1", strong("orders-main"), weak("orders-key", "key")))
    assert (created.resource_name, created.resource_namespace, created.resource_id) == ("orders", "lkc-1", "r-1")
    assert [(a.subject, a.association_type, a.lifecycle) for a in created.associations or []] == [
        ("orders-main", "value", "STRONG"),
        ("orders-key", "key", "WEAK"),
    ]
    theirs = front.registry.get_associations_by_resource_name("orders", "lkc-1")
    ours = sr.get_associations_by_resource_name("orders", "lkc-1")
    assert [(a.subject, a.association_type, a.resource_id) for a in ours] == [
        (a.subject, a.association_type, a.resource_id) for a in theirs
    ]
    assert [a.subject for a in sr.get_associations_by_resource_name("orders", "-", "topic", ["key"])] == ["orders-key"]
    sr.delete_associations("r-1", association_types=["key"])
    assert [a.subject for a in front.registry.get_associations_by_resource_name("orders", "-")] == ["orders-main"]
    sr.delete_associations("r-1", cascade_lifecycle=True)
    assert sr.get_associations_by_resource_name("orders", "-") == []


URL = "http://registry.invalid:8081"


@respx.mock
def test_rest_request_shapes() -> None:
    post = respx.post(f"{URL}/associations").mock(
        return_value=httpx.Response(
            200,
            json={
                "resourceName": "orders",
                "resourceNamespace": "lkc-1",
                "resourceId": "r-1",
                "resourceType": "topic",
                "associations": [
                    {
                        "subject": "s",
                        "associationType": "value",
                        "lifecycle": "STRONG",
                        "frozen": True,
                        "schema": {"schema": AVSC},
                    }
                ],
            },
        )
    )
    get = respx.get(f"{URL}/associations/resources/lkc-1/a%2Fb").mock(
        return_value=httpx.Response(200, json=[{"subject": "s", "guid": "g", "lifecycle": "WEAK", "frozen": False}])
    )
    delete = respx.delete(f"{URL}/associations/resources/r-1").mock(return_value=httpx.Response(204))
    sr = SchemaRegistryClient({"url": URL})
    answer = sr.create_association(request("r-1", strong("s", schema=Schema(AVSC, "AVRO"), frozen=True)))
    assert json.loads(post.calls.last.request.content) == {
        "resourceName": "orders",
        "resourceNamespace": "lkc-1",
        "resourceId": "r-1",
        "resourceType": "topic",
        "associations": [
            {
                "subject": "s",
                "associationType": "value",
                "lifecycle": "STRONG",
                "frozen": True,
                "schema": {"schema": AVSC, "schemaType": "AVRO", "references": []},
            }
        ],
    }
    info = (answer.associations or [])[0]
    assert (info.frozen, info.schema) == (True, Schema(AVSC))
    found = sr.get_associations_by_resource_name("a/b", "lkc-1", "topic", ["key", "value"], lifecycle="WEAK")
    assert [(a.subject, a.guid, a.lifecycle) for a in found] == [("s", "g", "WEAK")]
    params = get.calls.last.request.url.params
    assert params.get_list("associationType") == ["key", "value"]
    assert (params["resourceType"], params["lifecycle"]) == ("topic", "WEAK")
    sr.delete_associations("r-1", "topic", ["value"], cascade_lifecycle=True)
    params = delete.calls.last.request.url.params
    assert (params["cascadeLifecycle"], params["resourceType"], params.get_list("associationType")) == (
        "true",
        "topic",
        ["value"],
    )


def test_async_client_forwards_the_association_calls() -> None:
    async def run() -> list[str | None]:
        async with AsyncSchemaRegistryClient({"url": f"mock://assoc-{uuid.uuid4()}"}) as sr:
            await sr.create_association(request("r-1", strong("s", schema=Schema(AVSC, "AVRO"))))  # type: ignore[attr-defined]
            found = await sr.get_associations_by_resource_name("orders", "-")  # type: ignore[attr-defined]
            await sr.delete_associations("r-1", cascade_lifecycle=True)  # type: ignore[attr-defined]
            return [a.subject for a in found]

    assert asyncio.run(run()) == ["s"]


def test_get_schema_signature_and_the_registered_cache(front: RegistryFront) -> None:
    """confluent 2.16's ``get_schema(id, subject, fmt, reference_format)``; a registration put in
    ``_cache`` answers a later lookup without a request."""
    sr = SchemaRegistryClient({"url": front.url})
    registered = sr.register_schema_full_response("c-value", Schema(AVSC, "AVRO"))
    assert registered.schema_id is not None
    assert sr.get_schema(registered.schema_id, None, None, None).schema_str == AVSC
    other = SchemaRegistryClient({"url": front.url})
    other._cache.set_registered_schema(registered.schema, registered)
    asked = len(front.requests)
    assert other.lookup_schema("c-value", registered.schema) == registered
    assert other.get_schema(registered.schema_id, "c-value") == registered.schema
    assert len(front.requests) == asked


# --- the in-process registry ------------------------------------------------------------------------


def test_a_strong_association_registers_its_schema_and_is_its_subjects_only_one() -> None:
    sr = mock_client()
    created = sr.create_association(request("r-1", strong("orders-main", schema=Schema(AVSC, "AVRO"))))
    assert (created.associations or [])[0].lifecycle == "STRONG"
    assert sr.get_latest_version("orders-main").schema == Schema(AVSC, "AVRO")
    (association,) = sr.get_associations_by_resource_name("orders", "lkc-1")
    assert association.guid and (association.resource_id, association.lifecycle) == ("r-1", "STRONG")
    for other in (strong("orders-main"), weak("orders-main")):
        with pytest.raises(SchemaRegistryError) as e:
            sr.create_association(request("r-2", other, name="refunds"))
        assert status(e) == (409, 40911)


def test_weak_associations_share_a_subject_and_need_one_with_a_schema() -> None:
    sr = mock_client()
    with pytest.raises(SchemaRegistryError) as e:
        sr.create_association(request("r-1", weak("shared")))
    assert status(e) == (404, 40401)
    sr.register_schema("shared", Schema(AVSC, "AVRO"))
    sr.create_association(request("r-1", weak("shared")))
    sr.create_association(request("r-2", weak("shared"), name="refunds"))
    assert [a.resource_name for a in sr.get_associations_by_resource_name("refunds", "-", lifecycle="WEAK")] == [
        "refunds"
    ]
    with pytest.raises(SchemaRegistryError) as e:
        sr.create_association(request("r-3", strong("shared"), name="returns"))
    assert status(e) == (409, 40911)


@pytest.mark.parametrize(
    ("info", "why"),
    [
        (AssociationCreateOrUpdateInfo("s", "value", "WEAK", True), "frozen"),
        (AssociationCreateOrUpdateInfo("s", "value", "WEAK", None, Schema(AVSC, "AVRO")), "schema"),
        (AssociationCreateOrUpdateInfo("s", "value", "STRONG", True), "frozen"),
        (AssociationCreateOrUpdateInfo("s", "header", "STRONG"), "association type"),
        (AssociationCreateOrUpdateInfo("s", "value", "strong"), "lifecycle"),
        (AssociationCreateOrUpdateInfo(None, "value", "STRONG"), "subject"),
    ],
)
def test_invalid_associations_are_refused_before_anything_changes(
    info: AssociationCreateOrUpdateInfo, why: str
) -> None:
    sr = mock_client()
    with pytest.raises(SchemaRegistryError, match=why) as e:
        sr.create_association(request("r-1", strong("fine", "key", Schema(AVSC, "AVRO")), info))
    assert status(e) == (422, 42212)
    assert sr.get_subjects() == [] and sr.get_associations_by_resource_name("orders", "-") == []


def test_invalid_requests() -> None:
    sr = mock_client()
    bad = [
        AssociationCreateOrUpdateRequest("orders", None, "r-1", "topic", [strong("s", schema=Schema(AVSC, "AVRO"))]),
        AssociationCreateOrUpdateRequest(
            "orders", "lkc-1", "r-1", "connector", [strong("s", schema=Schema(AVSC, "AVRO"))]
        ),
        AssociationCreateOrUpdateRequest("orders", "lkc-1", "r-1", "topic", []),
        request("r-1", strong("a", schema=Schema(AVSC, "AVRO")), strong("b", schema=Schema(AVSC, "AVRO"))),
    ]
    for r in bad:
        with pytest.raises(SchemaRegistryError) as e:
            sr.create_association(r)
        assert status(e) == (422, 42212)


def test_a_create_is_idempotent_but_changes_nothing() -> None:
    sr = mock_client()
    sr.register_schema("s", Schema(AVSC, "AVRO"))
    sr.create_association(request("r-1", weak("s")))
    sr.create_association(request("r-1", weak("s")))
    assert len(sr.get_associations_by_resource_name("orders", "-")) == 1
    for changed in (strong("s"), weak("t")):
        with pytest.raises(SchemaRegistryError) as e:
            sr.create_association(request("r-1", changed))
        assert status(e) == (409, 40911)


def test_deletes_cascade_to_strong_subjects_only_and_frozen_ones_need_the_cascade() -> None:
    sr = mock_client()
    sr.register_schema("orders-weak", Schema(AVSC, "AVRO"))
    sr.create_association(request("r-1", strong("orders-strong", "key", Schema(AVSC, "AVRO")), weak("orders-weak")))
    sr.delete_associations("r-1")
    assert sorted(sr.get_subjects()) == ["orders-strong", "orders-weak"]
    sr.create_association(request("r-1", strong("orders-strong", "key"), weak("orders-weak")))
    sr.delete_associations("r-1", cascade_lifecycle=True)
    assert sr.get_subjects() == ["orders-weak"] and sr.get_associations_by_resource_name("orders", "-") == []
    sr.create_association(request("r-2", strong("frozen-value", schema=Schema(AVSC, "AVRO"), frozen=True)))
    with pytest.raises(SchemaRegistryError) as e:
        sr.delete_associations("r-2")
    assert e.value.http_status_code == 409
    sr.delete_associations("r-2", "topic", ["value"], cascade_lifecycle=True)
    assert sr.get_subjects() == ["orders-weak"]
    sr.delete_associations("r-2")  # nothing left to delete: not an error, as in confluent's mock


def test_a_frozen_association_takes_a_new_subject() -> None:
    sr = mock_client()
    sr.register_schema("taken", Schema(AVSC, "AVRO"))
    with pytest.raises(SchemaRegistryError) as e:
        sr.create_association(request("r-1", strong("taken", schema=Schema(AVSC, "AVRO"), frozen=True)))
    assert status(e) == (422, 42212)


def test_namespaces_filter_and_dash_matches_any() -> None:
    sr = mock_client()
    sr.create_association(request("r-1", strong("one", schema=Schema(AVSC, "AVRO")), namespace="lkc-1"))
    sr.create_association(request("r-2", strong("two", schema=Schema(AVSC, "AVRO")), namespace="lkc-2"))
    assert [a.subject for a in sr.get_associations_by_resource_name("orders", "lkc-2")] == ["two"]
    assert [a.subject for a in sr.get_associations_by_resource_name("orders", "-")] == ["one", "two"]
    assert [a.subject for a in sr.get_associations_by_resource_name("orders", "-", offset=1, limit=1)] == ["two"]
    assert sr.get_associations_by_resource_name("orders", "-", "topic", ["key"]) == []


# --- the ASSOCIATED strategy ----------------------------------------------------------------------


def test_associated_subject_found_once_then_cached() -> None:
    sr = mock_client()
    sr.create_association(request("r-1", strong("orders-main", schema=Schema(AVSC, "AVRO"))))
    ser = AvroSerializer(sr, AVSC, conf={**ASSOCIATED, "subject.name.strategy.conf": {KAFKA_CLUSTER_ID: "lkc-1"}})
    data = ser({"id": 1}, VALUE)
    assert data is not None and data[1:5] == sr.get_latest_version("orders-main").schema_id.to_bytes(4, "big")  # type: ignore[union-attr]
    sr.delete_associations("r-1", cascade_lifecycle=True)
    assert AvroDeserializer(sr)(ser({"id": 2}, VALUE), VALUE) == {"id": 2}  # the subject came from the cache
    other_cluster = AvroSerializer(
        sr, AVSC, conf={**ASSOCIATED, "subject.name.strategy.conf": {KAFKA_CLUSTER_ID: "lkc-9"}}
    )
    other_cluster({"id": 3}, VALUE)
    assert sr.get_versions("orders-value") == [1]  # no association there: the TOPIC fallback


def test_fallbacks_and_none() -> None:
    sr = mock_client()
    conf = {FALLBACK_TYPE: "topic_record"}
    AvroSerializer(sr, AVSC, conf={**ASSOCIATED, "subject.name.strategy.conf": conf})({"id": 1}, VALUE)
    assert sr.get_subjects() == ["orders-shop.Order"]
    none = AvroSerializer(
        sr,
        AVSC,
        conf={"subject.name.strategy.type": "associated", "subject.name.strategy.conf": {FALLBACK_TYPE: "NONE"}},
    )
    with pytest.raises(SerializationError, match="No associated subject found for topic 'orders' \\(value\\)"):
        none({"id": 1}, VALUE)


def test_two_associated_subjects_are_ambiguous() -> None:
    sr = mock_client()
    sr.create_association(request("r-1", strong("one", schema=Schema(AVSC, "AVRO")), namespace="lkc-1"))
    sr.create_association(request("r-2", strong("two", schema=Schema(AVSC, "AVRO")), namespace="lkc-2"))
    with pytest.raises(SerializationError, match="Multiple associated subjects"):
        AvroSerializer(sr, AVSC, conf=ASSOCIATED)({"id": 1}, VALUE)


def test_a_deserializer_reads_the_associated_subjects_latest() -> None:
    sr = mock_client()
    sr.create_association(request("r-1", strong("orders-main", schema=Schema(AVSC, "AVRO"))))
    data = AvroSerializer(sr, AVSC, conf=ASSOCIATED)({"id": 5}, VALUE)
    de = AvroDeserializer(sr, conf={**ASSOCIATED, "use.latest.version": True})
    assert de(data, VALUE) == {"id": 5}


def test_options_fail_when_the_serde_is_made() -> None:
    sr = mock_client()
    mistakes: list[tuple[dict[str, Any], str]] = [
        ({"subject.name.strategy.type": "NAMELESS"}, "subject.name.strategy.type"),
        ({"subject.name.strategy.type": "NONE"}, "only a fallback"),
        ({**ASSOCIATED, "subject.name.strategy.conf": {FALLBACK_TYPE: "ASSOCIATED"}}, "own fallback"),
        ({**ASSOCIATED, "subject.name.strategy.conf": {FALLBACK_TYPE: "nope"}}, FALLBACK_TYPE),
        ({"subject.name.strategy.conf": "lkc-1"}, "must be a dict"),
        ({"subject.name.strategy": "topic"}, "must be callable"),
    ]
    for conf, match in mistakes:
        with pytest.raises(ValueError, match=match):
            AvroSerializer(sr, AVSC, conf=conf)
    ser = AvroSerializer(
        sr, AVSC, conf={"subject.name.strategy.type": "record", "subject.name.strategy": lambda ctx, name: "mine"}
    )
    ser({"id": 1}, VALUE)
    assert sr.get_subjects() == ["mine"]  # the callable wins over the type


def test_an_associated_strategy_given_as_the_callable_is_asked_with_the_client() -> None:
    sr = mock_client()
    sr.create_association(request("r-1", strong("orders-main", schema=Schema(AVSC, "AVRO"))))
    strategy = AssociatedNameStrategy()
    ser = AvroSerializer(
        sr, AVSC, conf={"subject.name.strategy": strategy, "subject.name.strategy.conf": {KAFKA_CLUSTER_ID: "lkc-1"}}
    )
    ser({"id": 1}, VALUE)
    assert strategy(VALUE, None, sr) == "orders-main"
    sr.delete_associations("r-1", cascade_lifecycle=True)
    strategy.clear_cache()
    assert strategy(VALUE, None, sr) == "orders-value"
    with pytest.raises(ValueError, match="SerializationContext"):
        strategy(None, None, sr)


@respx.mock
def test_a_registry_without_the_association_api_means_no_association() -> None:
    respx.get(f"{URL}/associations/resources/-/orders").mock(
        return_value=httpx.Response(404, json={"error_code": 404, "message": "HTTP 404 Not Found"})
    )
    respx.get(f"{URL}/associations/resources/-/refunds").mock(
        return_value=httpx.Response(403, json={"error_code": 40301, "message": "forbidden"})
    )
    sr = SchemaRegistryClient({"url": URL})
    assert AssociatedNameStrategy()(VALUE, None, sr) == "orders-value"
    with pytest.raises(SchemaRegistryError) as e:
        AssociatedNameStrategy()(SerializationContext("refunds", MessageField.KEY), None, sr)
    assert e.value.http_status_code == 403


def test_our_request_values_read_confluents_json() -> None:
    theirs = TheirRequest(
        "orders", "-", "r-1", "topic", [TheirInfo("s", "key", "STRONG", None, TheirSchema(AVSC, "AVRO"))]
    )
    ours = AssociationCreateOrUpdateRequest.from_dict(theirs.to_dict())
    assert ours == request("r-1", strong("s", "key", Schema(AVSC, "AVRO")), namespace="-")
    assert ours.to_dict() == theirs.to_dict()


def test_a_forgotten_answer_is_asked_again_by_the_serdes_holding_it() -> None:
    """The serdes keep what the strategy's answer led to only while it holds the answer: cleared
    (or evicted), the next record asks the registry again, as confluent-kafka's serdes do."""
    sr = mock_client()
    sr.create_association(request("r-1", strong("orders-main", schema=Schema(AVSC, "AVRO"))))
    strategy = AssociatedNameStrategy(cache_capacity=2)
    ser = AvroSerializer(sr, AVSC, conf={"subject.name.strategy": strategy})
    de = AvroDeserializer(sr, conf={"subject.name.strategy": strategy, "use.latest.version": True})
    assert de(ser({"id": 1}, VALUE), VALUE) == {"id": 1}
    sr.delete_associations("r-1", cascade_lifecycle=True)
    ser({"id": 2}, VALUE)
    assert sr.get_subjects() == []  # still the remembered subject's id: nothing registered
    strategy.clear_cache()
    ser({"id": 3}, VALUE)
    assert sr.get_subjects() == ["orders-value"]
    for topic in ("refunds", "payments"):  # evict orders' answer
        strategy(SerializationContext(topic, MessageField.VALUE), None, sr)
    other = AVSC.replace('"type":"long"}', '"type":"long"},{"name":"note","type":"string","default":""}')
    sr.create_association(request("r-2", strong("orders-new", schema=Schema(other, "AVRO"))))
    ser({"id": 4}, VALUE)
    assert sr.get_versions("orders-new") == [1, 2]  # asked again: our schema registered there too


def _async_strategy_steps(lib: str) -> list[Any]:
    """AsyncAssociatedNameStrategy's outcomes on one library, over its own mock registry (no
    association registered: the fallbacks, the cache and the cluster id resolver)."""
    import importlib

    serde = importlib.import_module(f"{lib}.schema_registry.serde")
    registry = importlib.import_module(f"{lib}.schema_registry")
    serialization = importlib.import_module(f"{lib}.serialization")
    ctx = serialization.SerializationContext
    value = serialization.MessageField.VALUE

    async def main() -> list[Any]:
        client = registry.AsyncSchemaRegistryClient.new_client({"url": f"mock://async-assoc-{lib}"})
        strategy = serde.AsyncAssociatedNameStrategy()
        asked: list[str] = []

        async def cluster_id() -> str:
            asked.append("id")
            return "cluster-1"

        strategy.set_async_cluster_id_resolver(cluster_id)
        out: list[Any] = []

        async def outcome(*args: Any) -> Any:
            try:
                return await strategy(*args)
            except Exception as e:
                return type(e).__name__

        out.append(await outcome(None, None, client))
        out.append(await outcome(ctx(None, value), None, client))
        out.append(await outcome(ctx("orders", value), "Order", client))
        out.append(await outcome(ctx("orders", value), "Order", client))  # remembered
        out.append(list(asked))
        none = {"subject.name.strategy.fallback.type": "NONE"}
        out.append(await outcome(ctx("payments", value), None, client, none))
        record = {"subject.name.strategy.fallback.type": "RECORD", "subject.name.strategy.kafka.cluster.id": "c"}
        out.append(await outcome(ctx("refunds", value), "ns.Refund", client, record))
        out.append(list(asked))  # a configured cluster id: the resolver is not asked
        out.append(await outcome(ctx("audit", value), None, None))
        await strategy.clear_cache()
        out.append(await outcome(ctx("orders", value), "Order", client))
        out.append(len(asked))

        async def failing() -> str:
            raise RuntimeError("no broker")

        strategy.set_async_cluster_id_resolver(failing)
        out.append(await outcome(ctx("late", value), None, client))
        return out

    return asyncio.run(main())


def test_async_associated_strategy_as_confluent_kafkas() -> None:
    ours, theirs = _async_strategy_steps("kafkawire"), _async_strategy_steps("confluent_kafka")
    assert ours == theirs
    assert ours[2:5] == ["orders-value", "orders-value", ["id"]]
