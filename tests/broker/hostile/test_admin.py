"""Issue 13: the AdminClient against a hostile peer (tests/harness/hostile.py in front of Tansu).

Each case: one admin call meets the fault and its futures resolve (a result, or a KafkaException
with a code; never a builtin exception, never a future left running past its request_timeout);
once the peer is good the same AdminClient answers the call again.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kafkawire.admin import AdminClient, NewTopic
from kafkawire.local_broker import TansuBroker
from kafkawire.protocol.apis import (
    API_VERSIONS,
    CREATE_TOPICS,
    DESCRIBE_CLUSTER,
    DESCRIBE_CONFIGS,
    LIST_GROUPS,
    METADATA,
)
from kafkawire.protocol.schema import Api
from tests.harness.hostile import (
    Fault,
    HostileProxy,
    cut_body,
    duplicated,
    garbage,
    silent,
    size_prefix,
    trickle,
    truncated,
    wrong_correlation_id,
)
from tests.harness.hostile_checks import FAST, escaped_repr, hostile_tansu, outcome
from tests.harness.hostile_scenarios import admin_case
from tests.harness.judge import unique_name

pytestmark = pytest.mark.broker


CASES: list[tuple[str, str, Api, Fault, str]] = [
    # (fault name, admin call, API whose answer is hostile, fault, known defect)
    ("size-2^31-1", "Metadata", METADATA, size_prefix(2**31 - 1), ""),
    ("negative-size", "CreateTopics", CREATE_TOPICS, size_prefix(-5), ""),
    ("truncated", "DescribeConfigs", DESCRIBE_CONFIGS, truncated(0.3), ""),
    ("wrong-correlation-id", "DescribeCluster", DESCRIBE_CLUSTER, wrong_correlation_id(7), ""),
    ("silent", "ListGroups", LIST_GROUPS, silent, ""),
    ("one-byte-per-second", "Metadata", METADATA, trickle(1.0), ""),
    ("silent-api-versions", "DescribeCluster", API_VERSIONS, silent, ""),
    ("garbage", "DescribeConfigs", DESCRIBE_CONFIGS, garbage(3), ""),
    ("undecodable-body", "Metadata", METADATA, cut_body(0.5), ""),
    ("answer-twice", "CreateTopics", CREATE_TOPICS, duplicated, ""),
]


@pytest.fixture(scope="module")
def hostile() -> Iterator[tuple[TansuBroker, HostileProxy]]:
    yield from hostile_tansu()


@pytest.fixture(scope="module")
def topic(hostile: tuple[TansuBroker, HostileProxy]) -> str:
    _, proxy = hostile
    name = unique_name("hostile-admin")
    with AdminClient({"bootstrap.servers": proxy.address, **FAST}) as admin:
        for fut in admin.create_topics([NewTopic(name, 1)], request_timeout=10).values():
            fut.result(12)
    return name


@pytest.fixture(autouse=True)
def good_peer_after(hostile: tuple[TansuBroker, HostileProxy]) -> Iterator[None]:
    yield
    hostile[1].clear()


@pytest.mark.parametrize(
    ("call", "api", "fault"),
    [
        pytest.param(
            call, api, fault, id=f"{name}-{call}", marks=[pytest.mark.xfail(strict=True, reason=known)] if known else []
        )
        for name, call, api, fault, known in CASES
    ],
)
def test_admin_call_fault(
    hostile: tuple[TansuBroker, HostileProxy], topic: str, call: str, api: Api, fault: Fault
) -> None:
    _, proxy = hostile
    case = admin_case(proxy, topic, api, fault, call)
    assert case.exercised, "the fault was never applied"
    assert not case.problems, "\n".join(case.problems)


def test_defect1_admin_list_topics_raises_a_kafka_exception(hostile: tuple[TansuBroker, HostileProxy]) -> None:
    """list_topics against one Metadata answer that cannot be decoded: the answer from a new
    connection, or a KafkaException with a code; never a bare builtin TimeoutError('')."""
    _, proxy = hostile
    with AdminClient({"bootstrap.servers": proxy.address, **FAST}) as admin:
        proxy.on(METADATA, cut_body(0.5), times=1)
        result = outcome(lambda: admin.list_topics(timeout=5))
        assert result.escaped is None, escaped_repr(result)
        proxy.clear()
        assert outcome(lambda: admin.list_topics(timeout=5)).ok
