"""Classic group membership: the join/sync/heartbeat conversation and every group error's verdict."""

from __future__ import annotations

import pytest

from kafkawire.core.group import TRANSITIONS, VERDICTS, GroupConfig, GroupState, GroupVerdict, Membership, verdict
from kafkawire.protocol import codec
from kafkawire.protocol import error_codes as ec
from kafkawire.protocol.apis import LEAVE_GROUP
from kafkawire.protocol.codec import Struct

PROTOCOLS = [("range", b"sub")]


def config(**kw: object) -> GroupConfig:
    base: dict[str, object] = {
        "group_id": "g",
        "session_timeout": 10.0,
        "rebalance_timeout": 300.0,
        "heartbeat_interval": 3.0,
    }
    base.update(kw)
    return GroupConfig(**base)  # type: ignore[arg-type]


def join_answer(error: int = ec.NONE, member: str = "m1", leader: str = "m1", generation: int = 4) -> Struct:
    members = [Struct(member_id="m1", group_instance_id=None, metadata=b"sub")] if leader == member else []
    return Struct(
        error_code=error,
        member_id=member,
        generation_id=generation,
        protocol_name="range",
        leader=leader,
        members=members,
        skip_assignment=False,
    )


def stable(cooperative: bool = False, owned: dict[str, list[int]] | None = None, **kw: object) -> Membership:
    m = Membership(config(cooperative=cooperative, **kw))
    m.join_request(PROTOCOLS)
    m.on_join(join_answer(), now=0.0)
    m.on_sync(Struct(error_code=ec.NONE), owned if owned is not None else {"t": [0, 1]}, now=0.0)
    assert m.state is GroupState.STABLE
    return m


def test_leader_joins_assigns_and_gets_its_assignment() -> None:
    m = Membership(config(group_instance_id="inst"))
    body = m.join_request(PROTOCOLS)
    assert body["member_id"] == "" and body["group_instance_id"] == "inst" and body["protocol_type"] == "consumer"
    assert body["session_timeout_ms"] == 10000 and body["rebalance_timeout_ms"] == 300000
    step = m.on_join(join_answer(), now=0.0)
    assert m.state is GroupState.SYNCING and m.is_leader and step.members is not None and len(step.members) == 1
    sync = m.sync_request({"m1": b"assignment"})
    assert sync["generation_id"] == 4 and sync["assignments"] == [{"member_id": "m1", "assignment": b"assignment"}]
    step = m.on_sync(Struct(error_code=ec.NONE), {"t": [0]}, now=1.0)
    assert step.assign == {"t": [0]} and not step.rejoin and m.state is GroupState.STABLE


@pytest.mark.parametrize("assignment", [None, {"t": [0], "not-subscribed": [0]}])
def test_an_assignment_that_cannot_be_ours_makes_the_member_join_again(assignment: dict[str, list[int]] | None) -> None:
    """Issue 13: an undecodable assignment (None) or one naming a topic we did not subscribe to
    (a mutated answer) used to be taken as is, leaving the member on partitions it never reads."""
    m = Membership(config())
    m.join_request(PROTOCOLS)
    m.on_join(join_answer(), now=0.0)
    step = m.on_sync(Struct(error_code=ec.NONE), assignment, now=1.0, subscribed=["t"])
    assert step.rejoin and not step.assign and m.state is GroupState.UNJOINED and m.owned == {}
    m.join_request(PROTOCOLS)
    m.on_join(join_answer(), now=2.0)
    assert m.on_sync(Struct(error_code=ec.NONE), {"t": [0]}, now=3.0, subscribed=["t"]).assign == {"t": [0]}


def test_follower_gets_no_members_to_assign() -> None:
    m = Membership(config())
    m.join_request(PROTOCOLS)
    assert m.on_join(join_answer(member="m2", leader="m1"), now=0.0).members is None


def test_member_id_required_is_adopted_and_the_join_resent() -> None:
    m = Membership(config())
    m.join_request(PROTOCOLS)
    step = m.on_join(join_answer(ec.MEMBER_ID_REQUIRED, member="given"), now=0.0)
    assert step.rejoin and m.member_id == "given" and m.state is GroupState.JOINING
    assert m.join_request(PROTOCOLS)["member_id"] == "given"


def test_heartbeats_fall_due_every_interval() -> None:
    m = stable()
    assert not m.heartbeat_due(2.9) and m.heartbeat_due(3.0)
    m.heartbeat_request(3.0)
    assert m.next_heartbeat() == 6.0


def test_rebalance_in_progress_eager_revokes_everything_before_rejoining() -> None:
    m = stable()
    step = m.on_heartbeat(ec.REBALANCE_IN_PROGRESS, now=3.0)
    assert step.rejoin and step.revoke == {"t": [0, 1]} and not step.lost and m.owned == {}
    assert m.state is GroupState.UNJOINED and m.member_id == "m1" and m.generation == 4


def test_rebalance_in_progress_cooperative_keeps_partitions() -> None:
    m = stable(cooperative=True)
    step = m.on_heartbeat(ec.REBALANCE_IN_PROGRESS, now=3.0)
    assert step.rejoin and not step.revoke and m.owned == {"t": [0, 1]}


def test_cooperative_sync_revokes_only_what_was_taken_then_rejoins() -> None:
    m = stable(cooperative=True, owned={"t": [0, 1, 2]})
    m.on_heartbeat(ec.REBALANCE_IN_PROGRESS, now=1.0)
    m.join_request(PROTOCOLS)
    m.on_join(join_answer(generation=5), now=1.0)
    step = m.on_sync(Struct(error_code=ec.NONE), {"t": [0, 1], "u": [0]}, now=1.0)
    assert step.revoke == {"t": [2]} and step.assign == {"u": [0]} and step.rejoin
    assert m.owned == {"t": [0, 1], "u": [0]}
    m.join_request(PROTOCOLS)  # the second round, from STABLE


@pytest.mark.parametrize("code,member_kept", [(ec.UNKNOWN_MEMBER_ID, False), (ec.ILLEGAL_GENERATION, True)])
def test_lost_membership_loses_partitions(code: int, member_kept: bool) -> None:
    m = stable(cooperative=True)
    step = m.on_heartbeat(code, now=3.0)
    assert step.lost == {"t": [0, 1]} and not step.revoke and step.rejoin
    assert m.generation == -1 and (m.member_id == "m1") is member_kept and m.state is GroupState.UNJOINED


def test_fenced_static_member_is_fatal() -> None:
    m = stable(group_instance_id="inst")
    step = m.on_heartbeat(ec.FENCED_INSTANCE_ID, now=3.0)
    assert step.error == ec.FENCED_INSTANCE_ID and step.lost == {"t": [0, 1]} and m.state is GroupState.FATAL
    with pytest.raises(RuntimeError, match="illegal in state fatal"):
        m.join_request(PROTOCOLS)


def test_coordinator_moved_while_stable_keeps_the_membership() -> None:
    m = stable()
    step = m.on_heartbeat(ec.NOT_COORDINATOR, now=3.0)
    assert step.find_coordinator and step.retry and not step.rejoin and m.state is GroupState.STABLE


def test_coordinator_moved_during_join_rejoins_there() -> None:
    m = Membership(config())
    m.join_request(PROTOCOLS)
    step = m.on_join(join_answer(ec.COORDINATOR_NOT_AVAILABLE), now=0.0)
    assert step.find_coordinator and step.rejoin and m.state is GroupState.UNJOINED


def test_coordinator_loading_means_ask_again() -> None:
    m = Membership(config())
    m.join_request(PROTOCOLS)
    step = m.on_join(join_answer(ec.COORDINATOR_LOAD_IN_PROGRESS), now=0.0)
    assert step.retry and not step.rejoin and m.state is GroupState.JOINING


def test_session_expires_without_successful_heartbeats() -> None:
    m = stable()
    m.on_heartbeat(ec.NONE, now=5.0)
    assert m.session_expired(15.0) is None
    step = m.session_expired(15.1)
    assert step is not None and step.lost == {"t": [0, 1]} and m.member_id == ""


def test_leaving_revokes_and_a_static_member_sends_no_leave() -> None:
    m = stable()
    body = m.leave_request()
    assert body is not None
    assert body(2) == {"group_id": "g", "member_id": "m1"}
    assert body(3) == {
        "group_id": "g",
        "members": [{"member_id": "m1", "group_instance_id": None, "reason": "the consumer is closing"}],
    }
    for version in range(LEAVE_GROUP.min_version, LEAVE_GROUP.max_version + 1):
        codec.encode(LEAVE_GROUP.request, version, body(version))  # every version can carry it
    assert m.left().revoke == {"t": [0, 1]} and m.state is GroupState.UNJOINED and m.member_id == ""
    assert stable(group_instance_id="inst").leave_request() is None


def test_sync_before_join_is_illegal() -> None:
    with pytest.raises(RuntimeError, match="sync answered is illegal in state unjoined"):
        Membership(config()).on_sync(Struct(error_code=ec.NONE), {}, now=0.0)


def test_unknown_group_errors_do_not_end_the_membership() -> None:
    """Issue 39: a Kafka 2.3 broker answered a Heartbeat with UNKNOWN_SERVER_ERROR (its own
    NoSuchElementException) and the member stopped for good; librdkafka asks again."""
    m = stable()
    step = m.on_heartbeat(ec.UNKNOWN_SERVER_ERROR, now=3.0)
    assert step.retry and not step.rejoin and step.error is None and not step.lost and m.state is GroupState.STABLE
    assert m.owned == {"t": [0, 1]}
    m.on_heartbeat(ec.NONE, now=4.0)
    assert m.session_expired(13.9) is None  # the session counts from the last heartbeat that succeeded
    syncing = Membership(config())
    syncing.join_request(PROTOCOLS)
    syncing.on_join(join_answer(), now=0.0)
    step = syncing.on_sync(Struct(error_code=ec.UNKNOWN_SERVER_ERROR), None, now=0.0)
    assert step.rejoin and step.error is None and syncing.state is GroupState.UNJOINED
    joining = Membership(config())
    joining.join_request(PROTOCOLS)
    step = joining.on_join(join_answer(ec.UNKNOWN_SERVER_ERROR), now=0.0)
    assert step.refused == ec.UNKNOWN_SERVER_ERROR and step.error is None  # reported, joined again later


def test_only_named_group_errors_are_fatal_and_the_table_uses_named_codes() -> None:
    assert (
        verdict(ec.UNKNOWN_SERVER_ERROR) is GroupVerdict.UNKNOWN
        and verdict(ec.FENCED_INSTANCE_ID) is GroupVerdict.FATAL
    )
    names = {v: k for k, v in vars(ec).items() if isinstance(v, int) and k.isupper()}
    assert all(code in names for code in VERDICTS)
    assert all(isinstance(s, GroupState) for pair in TRANSITIONS for s in (pair[0], TRANSITIONS[pair]))


@pytest.mark.parametrize("cooperative", [False, True])
def test_a_rejoin_after_partitions_left_us_waits_for_the_application(cooperative: bool) -> None:
    """Issue 39: a member that loses its session (or its generation) while a transaction is open
    must not join again, and so read a new assignment's committed offsets, before the application's
    on_lost/on_revoke ran (where it finishes the transaction): every step that revokes or loses
    partitions holds its rejoin; one that gives nothing back does not."""
    expired = stable(cooperative=cooperative).session_expired(20.0)
    assert expired is not None and expired.lost and expired.holds_rejoin
    for code in (ec.UNKNOWN_MEMBER_ID, ec.ILLEGAL_GENERATION):
        step = stable(cooperative=cooperative).on_heartbeat(code, now=3.0)
        assert step.lost and step.holds_rejoin
    rebalance = stable(cooperative=cooperative).on_heartbeat(ec.REBALANCE_IN_PROGRESS, now=3.0)
    assert rebalance.rejoin and rebalance.holds_rejoin is (not cooperative)  # eager: everything revoked
    nothing_owned = stable(cooperative=cooperative, owned={}).on_heartbeat(ec.UNKNOWN_MEMBER_ID, now=3.0)
    assert nothing_owned.rejoin and not nothing_owned.holds_rejoin
    m = stable(cooperative=True, owned={"t": [0, 1, 2]})
    m.on_heartbeat(ec.REBALANCE_IN_PROGRESS, now=1.0)
    m.join_request(PROTOCOLS)
    m.on_join(join_answer(generation=5), now=1.0)
    taken = m.on_sync(Struct(error_code=ec.NONE), {"t": [0, 1]}, now=1.0)
    assert taken.revoke and taken.holds_rejoin  # the second round waits for on_revoke too


def test_a_member_waiting_to_rejoin_after_a_revocation_keeps_its_session_and_one_that_lost_it_does_not() -> None:
    """Issue 39: a member whose rejoin waited for the application's revocation stopped heartbeating;
    the application finishing a transaction for longer than session.timeout.ms got it dropped, its
    partitions given to the other member, and the records of that transaction copied twice."""
    m = stable()
    assert m.held_heartbeat_request(now=1.0) is None  # stable: the ordinary heartbeat runs
    step = m.on_heartbeat(ec.REBALANCE_IN_PROGRESS, now=3.0)
    assert step.holds_rejoin and m.state is GroupState.UNJOINED
    body = m.held_heartbeat_request(now=4.0)
    assert body is not None and body["generation_id"] == 4 and body["member_id"] == "m1"
    gone = stable()
    gone.on_heartbeat(ec.UNKNOWN_MEMBER_ID, now=3.0)  # dropped: nothing left to keep alive
    assert gone.held_heartbeat_request(now=4.0) is None
