"""Every declared schema equals Apache Kafka's JSON spec: names, types, versions, nullability, tags, defaults."""

from __future__ import annotations

from typing import Any

import pytest

from kafkawire.protocol.apis import ALL_APIS
from kafkawire.protocol.consumer_protocol import ASSIGNMENT, SUBSCRIPTION
from kafkawire.protocol.headers import REQUEST_HEADER, RESPONSE_HEADER
from kafkawire.protocol.schema import NONE, Array, Field, MessageSchema, Versions, default_for

from .kafka_specs import load_spec, snake

# APIs whose oldest versions Kafka 4 removed from its specs but that we still speak to older
# brokers (the mock cluster included). Our range may start lower than the spec's, never end elsewhere.
REQUIRED_APIS = {
    "ApiVersions", "Metadata", "Produce", "InitProducerId", "FindCoordinator", "AddPartitionsToTxn",
    "AddOffsetsToTxn", "EndTxn", "TxnOffsetCommit", "CreateTopics", "DeleteTopics", "CreatePartitions",
    "DescribeConfigs", "AlterConfigs", "IncrementalAlterConfigs", "DescribeCluster", "ListOffsets",
    "Fetch", "ListGroups", "DescribeGroups", "DeleteRecords", "SaslHandshake", "SaslAuthenticate",
    "JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup", "OffsetCommit", "OffsetFetch",
    "ConsumerGroupHeartbeat", "CreateAcls", "DescribeAcls", "DeleteAcls", "DeleteGroups", "ElectLeaders",
    "DescribeUserScramCredentials", "AlterUserScramCredentials",
}  # fmt: skip

# APIs newer than the specs the kafka-python wheel ships: librdkafka's mock cluster judges them
# (KIP-848's ConsumerGroupHeartbeat, tests/broker/groups/test_kip848_membership.py; KIP-932's share group APIs,
# tests/broker/share/test_share_consumer.py), Tansu KIP-848's ConsumerGroupDescribe
# (tests/broker/admin/test_admin_calls_tansu.py), until the wheel has them.
NOT_IN_WHEEL = {
    "ConsumerGroupHeartbeat", "ShareGroupHeartbeat", "ShareGroupDescribe", "ShareFetch", "ShareAcknowledge",
    "GetTelemetrySubscriptions", "PushTelemetry", "ConsumerGroupDescribe",
}  # fmt: skip
COMPARABLE_APIS = [a for a in ALL_APIS if a.name not in NOT_IN_WHEEL]


def _parse_default(raw: Any, type_: Any, nullable: Versions) -> Any:
    if raw is None:
        return default_for(type_, nullable)
    if raw == "null":
        return None
    if isinstance(raw, bool):
        return raw
    if type_ == "bool":
        return str(raw).lower() == "true"
    if type_ in ("int8", "int16", "int32", "int64", "uint16"):
        return int(str(raw), 0)
    if type_ == "float64":
        return float(raw)
    return raw


def _ref_type(spec_field: dict[str, Any], common: dict[str, list[dict[str, Any]]]) -> Any:
    """The spec's type expressed in our vocabulary: a primitive name, Array, or a tuple of fields."""
    t: str = spec_field["type"]
    is_array = t.startswith("[]")
    base = t[2:] if is_array else t
    if base in ("int8", "int16", "int32", "int64", "uint16", "float64", "bool", "uuid", "string", "bytes", "records"):
        return Array(base) if is_array else base
    sub = spec_field.get("fields", common.get(base))
    assert sub is not None, f"struct {base} has no fields in the spec"
    fields = tuple(_ref_field(s, common) for s in sub)
    return Array(fields) if is_array else fields


def _ref_field(s: dict[str, Any], common: dict[str, list[dict[str, Any]]]) -> Field:
    type_ = _ref_type(s, common)
    nullable = Versions.parse(s.get("nullableVersions", "none"))
    tag = s.get("tag")
    versions = Versions.parse(s["versions"])
    return Field(
        name=snake(s["name"]),
        type=type_,
        versions=versions,
        nullable=nullable,
        tag=tag,
        tagged=Versions.parse(s["taggedVersions"]) if tag is not None else NONE,
        flexible=Versions.parse(s["flexibleVersions"]) if "flexibleVersions" in s else None,
        ignorable=bool(s.get("ignorable", False)),
        default=None if isinstance(type_, tuple) else _parse_default(s.get("default"), type_, nullable),
    )


def _describe(fields: tuple[Field, ...], path: str = "") -> dict[str, tuple[Any, ...]]:
    """Flatten fields to path -> every attribute we compare, so a mismatch names the exact field."""
    out: dict[str, tuple[Any, ...]] = {}
    for fld in fields:
        where = f"{path}{fld.name}"
        t = fld.type
        kind = "array" if isinstance(t, Array) else "struct" if isinstance(t, tuple) else t
        element = t.of if isinstance(t, Array) and isinstance(t.of, str) else None
        default = fld.default if not fld.struct_fields else None
        out[where] = (
            kind,
            element,
            str(fld.versions),
            str(fld.nullable),
            fld.tag,
            str(fld.tagged),
            None if fld.flexible is None else str(fld.flexible),
            fld.ignorable,
            default,
        )
        if fld.struct_fields:
            out.update(_describe(fld.struct_fields, f"{where}."))
    return out


def _compare(ours: MessageSchema, spec_name: str, allow_lower_min: bool) -> None:
    spec = load_spec(spec_name)
    common = {c["name"]: c["fields"] for c in spec.get("commonStructs", [])}
    ref_versions = Versions.parse(spec["validVersions"])
    assert ours.versions.high == ref_versions.high, f"{spec_name}: latest version"
    if allow_lower_min:
        assert ours.versions.low <= ref_versions.low, f"{spec_name}: oldest version"
    else:
        assert ours.versions.low == ref_versions.low, f"{spec_name}: oldest version"
    assert ours.flexible == Versions.parse(spec["flexibleVersions"]), f"{spec_name}: flexible versions"
    ref_fields = tuple(_ref_field(s, common) for s in spec["fields"])
    mine, theirs = _describe(ours.fields), _describe(ref_fields)
    assert list(mine) == list(theirs), f"{spec_name}: field names or order differ"
    for path in theirs:
        assert mine[path] == theirs[path], (
            f"{spec_name}.{path}: (kind, element, versions, nullable, tag, tagged, flexible, ignorable, default)"
        )


def test_every_required_api_is_declared() -> None:
    assert {a.name for a in ALL_APIS} >= REQUIRED_APIS


def test_apis_missing_from_the_wheel_are_still_missing() -> None:
    """Fails once the wheel ships their specs, so that they join the comparison."""
    for name in NOT_IN_WHEEL:
        with pytest.raises(FileNotFoundError):
            load_spec(f"{name}Request")


@pytest.mark.parametrize("api", COMPARABLE_APIS, ids=lambda a: a.name)
@pytest.mark.parametrize("direction", ["request", "response"])
def test_schema_matches_kafka_spec(api: Any, direction: str) -> None:
    ours: MessageSchema = getattr(api, direction)
    spec = load_spec(ours.name)
    assert spec["apiKey"] == api.key
    _compare(ours, ours.name, allow_lower_min=True)


def test_headers_match_kafka_spec() -> None:
    # The spec's RequestHeader starts at v1 since Kafka 4; we keep v0 for completeness.
    _compare(REQUEST_HEADER, "RequestHeader", allow_lower_min=True)
    _compare(RESPONSE_HEADER, "ResponseHeader", allow_lower_min=False)


@pytest.mark.parametrize("schema", [SUBSCRIPTION, ASSIGNMENT], ids=lambda s: s.name)
def test_consumer_protocol_matches_kafka_spec(schema: MessageSchema) -> None:
    _compare(schema, schema.name, allow_lower_min=False)
