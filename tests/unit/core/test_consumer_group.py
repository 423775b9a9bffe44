"""KIP-848 membership: join with epoch 0, reconcile towards the target (revoke, then assign, then
acknowledge), fencing, leaving, and the verdict of every error."""

from __future__ import annotations

import uuid

import pytest

from kafkawire.core.consumer_group import (
    VERDICTS,
    ConsumerGroupConfig,
    ConsumerGroupMember,
    ConsumerGroupState,
    HeartbeatVerdict,
    verdict,
)
from kafkawire.protocol import error_codes as ec
from kafkawire.protocol.codec import Struct

T1, T2 = uuid.UUID(int=1), uuid.UUID(int=2)


def answer(epoch: int, assignment: dict[uuid.UUID, list[int]] | None, error: int = ec.NONE) -> Struct:
    tps = (
        None
        if assignment is None
        else Struct(topic_partitions=[Struct(topic_id=t, partitions=p) for t, p in assignment.items()])
    )
    return Struct(error_code=error, member_id=None, member_epoch=epoch, heartbeat_interval_ms=500, assignment=tps)


def member(**kw: object) -> ConsumerGroupMember:
    return ConsumerGroupMember(ConsumerGroupConfig("g", 300.0, ["b", "a"], **kw), member_id="me")  # type: ignore[arg-type]


def joined(owned: dict[uuid.UUID, list[int]]) -> ConsumerGroupMember:
    m = member()
    m.heartbeat_request(0.0)
    m.on_heartbeat(answer(1, owned), 0.0)
    m.reconciled(0.0)
    assert m.state is ConsumerGroupState.STABLE
    return m


def test_join_sends_epoch_zero_and_the_full_subscription() -> None:
    m = member(group_instance_id="i", rack_id="r")
    body = m.heartbeat_request(0.0)
    assert body["member_epoch"] == 0 and body["member_id"] == "me" and body["subscribed_topic_names"] == ["a", "b"]
    assert body["rebalance_timeout_ms"] == 300000 and body["instance_id"] == "i" and body["topic_partitions"] == []
    assert m.state is ConsumerGroupState.JOINING


def test_reconciliation_assigns_then_acknowledges_in_the_next_heartbeat() -> None:
    m = member()
    m.heartbeat_request(0.0)
    step = m.on_heartbeat(answer(3, {T1: [0, 1]}), 1.0)
    assert (
        step.assign == {T1: [0, 1]} and not step.revoke and m.state is ConsumerGroupState.RECONCILING and m.epoch == 3
    )
    assert not m.heartbeat_due(1.1)
    m.reconciled(1.1)
    assert m.heartbeat_due(1.1)  # the acknowledgement leaves at once
    assert m.heartbeat_request(1.1)["topic_partitions"] == [{"topic_id": T1, "partitions": [0, 1]}]
    assert m.state is ConsumerGroupState.STABLE and m.heartbeat_interval == 0.5


def test_a_new_target_revokes_what_it_drops_and_assigns_what_it_adds() -> None:
    m = joined({T1: [0, 1]})
    step = m.on_heartbeat(answer(4, {T1: [1], T2: [0]}), 2.0)
    assert step.revoke == {T1: [0]} and step.assign == {T2: [0]}


def test_a_null_assignment_means_unchanged() -> None:
    m = joined({T1: [0]})
    step = m.on_heartbeat(answer(4, None), 2.0)
    assert not (step.assign or step.revoke or step.lost)
    assert m.state is ConsumerGroupState.STABLE and m.epoch == 4


@pytest.mark.parametrize("code", [ec.FENCED_MEMBER_EPOCH, ec.UNKNOWN_MEMBER_ID])
def test_fenced_member_loses_partitions_and_rejoins_with_epoch_zero(code: int) -> None:
    m = joined({T1: [0]})
    step = m.on_heartbeat(answer(0, None, code), 2.0)
    assert step.lost == {T1: [0]} and step.error is None and m.state is ConsumerGroupState.UNJOINED
    assert m.heartbeat_request(2.0)["member_epoch"] == 0 and m.member_id == "me"


def test_coordinator_moved_keeps_the_membership() -> None:
    m = joined({T1: [0]})
    step = m.on_heartbeat(answer(0, None, ec.NOT_COORDINATOR), 2.0)
    assert step.find_coordinator and step.retry and m.state is ConsumerGroupState.STABLE and m.owned == {T1: [0]}


def test_unreleased_instance_id_is_fatal() -> None:
    m = joined({T1: [0]})
    step = m.on_heartbeat(answer(0, None, ec.UNRELEASED_INSTANCE_ID), 2.0)
    assert step.error == ec.UNRELEASED_INSTANCE_ID and m.state is ConsumerGroupState.FATAL
    assert m.leave_request() is None and not m.heartbeat_due(99.0)
    with pytest.raises(RuntimeError, match="join is illegal in state fatal"):
        m.heartbeat_request(3.0)


def test_leaving_uses_epoch_minus_one_or_minus_two_for_static_members() -> None:
    m = joined({T1: [0]})
    assert m.leave_request()["member_epoch"] == -1  # type: ignore[index]
    assert m.on_left().revoke == {T1: [0]} and m.state is ConsumerGroupState.UNJOINED
    static = member(group_instance_id="i")
    static.heartbeat_request(0.0)
    assert static.leave_request()["member_epoch"] == -2  # type: ignore[index]
    assert member().leave_request() is None  # never joined: nothing to leave


def test_unknown_errors_are_fatal() -> None:
    assert verdict(ec.UNKNOWN_SERVER_ERROR) is HeartbeatVerdict.FATAL
    assert verdict(ec.COORDINATOR_LOAD_IN_PROGRESS) is HeartbeatVerdict.RETRY
    assert set(VERDICTS) <= {v for k, v in vars(ec).items() if k.isupper() and isinstance(v, int)}


def test_a_target_repeated_while_the_application_reconciles_is_handed_over_once() -> None:
    m = member()
    m.heartbeat_request(0.0)
    first = m.on_heartbeat(answer(3, {T1: [0, 1]}), 1.0)
    assert first.assign == {T1: [0, 1]}
    again = m.on_heartbeat(answer(3, {T1: [0, 1]}), 2.0)  # callbacks not served yet
    assert not again.assign and not again.revoke and m.state is ConsumerGroupState.RECONCILING
    changed = m.on_heartbeat(answer(4, {T1: [0]}), 3.0)  # news, relative to what was handed over
    assert changed.revoke == {T1: [1]} and not changed.assign
    m.reconciled(3.1)
    assert m.state is ConsumerGroupState.STABLE and m.owned == {T1: [0]}


def test_resubscribe_sends_the_new_topics_in_a_heartbeat_due_now() -> None:
    m = member()
    m.heartbeat_request(now=10.0)
    assert not m.heartbeat_due(11.0)  # the next one waits for the interval
    assert not m.resubscribe(["a", "b"])  # the same topics: nothing to tell
    assert m.resubscribe(["a", "b", "c"])
    assert m.heartbeat_due(11.0)
    assert m.heartbeat_request(now=11.0)["subscribed_topic_names"] == ["a", "b", "c"]
