"""KIP-932's sans-IO pieces: the share group member, the acknowledgement book, share sessions."""

from __future__ import annotations

import uuid

import pytest

from kafkawire.core.share_acks import ACCEPT, GAP, IMPLICIT, REJECT, RELEASE, Acknowledgements, Refusal, batches
from kafkawire.core.share_group import LEAVE_EPOCH, ShareGroupMember, ShareGroupState
from kafkawire.core.share_session import CLOSE_EPOCH, ShareSession
from kafkawire.protocol import error_codes as ec
from kafkawire.protocol.codec import Struct

T = uuid.UUID(int=7)
TP = ("t", 0)


def answer(error: int = 0, epoch: int = 1, assignment: dict[uuid.UUID, list[int]] | None = None) -> Struct:
    tps = None
    if assignment is not None:
        tps = Struct(topic_partitions=[Struct(topic_id=t, partitions=p) for t, p in assignment.items()])
    return Struct(error_code=error, member_id=None, member_epoch=epoch, heartbeat_interval_ms=250, assignment=tps)


def test_member_joins_with_epoch_zero_and_topics_then_heartbeats_without_them() -> None:
    m = ShareGroupMember("g", "me", ["t"])
    first = m.heartbeat_request()
    assert (first["member_epoch"], first["subscribed_topic_names"], m.state) == (0, ["t"], ShareGroupState.JOINING)
    step = m.on_heartbeat(answer(epoch=3, assignment={T: [1, 0]}))
    assert step.assignment == {T: [0, 1]} and m.state is ShareGroupState.STABLE and m.heartbeat_interval == 0.25
    again = m.heartbeat_request()
    assert (again["member_epoch"], again["subscribed_topic_names"]) == (3, None)
    assert m.on_heartbeat(answer(epoch=3, assignment=None)).assignment is None  # null: unchanged


def test_a_fenced_member_loses_its_assignment_and_rejoins_with_epoch_zero() -> None:
    m = ShareGroupMember("g", "me", ["t"])
    m.heartbeat_request()
    m.on_heartbeat(answer(epoch=2, assignment={T: [0]}))
    step = m.on_heartbeat(answer(error=ec.FENCED_MEMBER_EPOCH))
    assert step.assignment == {} and m.state is ShareGroupState.UNJOINED
    body = m.heartbeat_request()
    assert (body["member_id"], body["member_epoch"], body["subscribed_topic_names"]) == ("me", 0, ["t"])


@pytest.mark.parametrize(
    ("code", "attr"), [(ec.NOT_COORDINATOR, "find_coordinator"), (ec.COORDINATOR_LOAD_IN_PROGRESS, "retry")]
)
def test_coordinator_errors_keep_the_membership(code: int, attr: str) -> None:
    m = ShareGroupMember("g", "me", ["t"])
    m.heartbeat_request()
    m.on_heartbeat(answer(epoch=2, assignment={T: [0]}))
    step = m.on_heartbeat(answer(error=code))
    assert getattr(step, attr) and step.assignment is None and m.epoch == 2


def test_fatal_error_and_leaving() -> None:
    m = ShareGroupMember("g", "me", ["t"])
    m.heartbeat_request()
    assert m.on_heartbeat(answer(error=ec.GROUP_MAX_SIZE_REACHED)).error == ec.GROUP_MAX_SIZE_REACHED
    assert m.state is ShareGroupState.FATAL and m.leave_request() is None
    n = ShareGroupMember("g", "me", ["t"])
    assert n.leave_request() is None  # never joined: nothing to leave
    k = ShareGroupMember("g", "me", ["t"])
    k.heartbeat_request()
    k.on_heartbeat(answer(epoch=5))
    assert k.leave_request()["member_epoch"] == LEAVE_EPOCH and k.leave_request() is None


def test_batches_group_consecutive_offsets_of_one_type() -> None:
    got = batches({5: ACCEPT, 3: ACCEPT, 4: ACCEPT, 6: RELEASE, 8: RELEASE, 9: GAP})
    assert [(b["first_offset"], b["last_offset"], b["acknowledge_types"]) for b in got] == [
        (3, 5, [ACCEPT]),
        (6, 6, [RELEASE]),
        (8, 8, [RELEASE]),
        (9, 9, [GAP]),
    ]


def test_implicit_mode_accepts_the_previous_poll() -> None:
    book = Acknowledgements(IMPLICIT)
    book.delivered([(TP, 0), (TP, 1)])
    assert book.acknowledge(TP, 0, REJECT) is Refusal.IMPLICIT_MODE
    assert book.before_poll() is None
    assert book.take() == {TP: {0: ACCEPT, 1: ACCEPT}} and book.take() == {}


def test_explicit_mode_needs_every_record_acknowledged_before_the_next_poll() -> None:
    book = Acknowledgements("explicit")
    book.delivered([(TP, 0), (TP, 1)])
    assert book.acknowledge(TP, 0, 4) is Refusal.BAD_TYPE
    assert book.acknowledge(TP, 9, ACCEPT) is Refusal.NOT_IN_FLIGHT
    assert book.acknowledge(TP, 0, RELEASE) is None
    assert book.before_poll() is Refusal.UNACKNOWLEDGED
    book.before_commit()  # a commit sends what was acknowledged, the rest stays in flight
    assert book.take() == {TP: {0: RELEASE}} and book.in_flight_count() == 1
    assert book.acknowledge(TP, 1, REJECT) is None and book.before_poll() is None
    assert book.take([TP]) == {TP: {1: REJECT}}


@pytest.mark.parametrize("mode", ["implicit", "explicit"])
def test_closing_sends_only_what_the_application_acknowledged(mode: str) -> None:
    book = Acknowledgements(mode)
    book.delivered([(TP, 0), (TP, 1)])
    if mode == "explicit":
        assert book.acknowledge(TP, 1, REJECT) is None
    book.before_close()
    assert book.take() == ({} if mode == "implicit" else {TP: {1: REJECT}})
    assert book.in_flight_count() == (2 if mode == "implicit" else 1)  # left for the broker to release


def test_gaps_are_pending_at_once() -> None:
    book = Acknowledgements(IMPLICIT)
    book.gaps(TP, [4, 5])
    assert book.holds(TP, 4) and not book.holds(TP, 6) and book.take() == {TP: {4: GAP, 5: GAP}}


def test_what_a_share_fetch_finds_held_includes_acks_taken_for_a_commit_until_they_are_sent() -> None:
    """A ShareFetch that leaves before a commit's ShareAcknowledge is answered before the broker
    applies it, so its answer lists those records acquired still: they must not count as new."""
    other = ("t", 1)
    book = Acknowledgements(IMPLICIT)
    book.delivered([(TP, 0), (TP, 1), (other, 5)])
    assert book.held([TP, other, ("t", 2)]) == {TP: {0, 1}, other: {5}}
    assert book.unsettled([TP, ("t", 2)]) == {TP}
    book.before_commit()
    taken = book.take([TP], until_sent=True)
    assert taken == {TP: {0: ACCEPT, 1: ACCEPT}} and book.holds(TP, 0) and book.held([TP]) == {TP: {0, 1}}
    assert book.unsettled([TP]) == {TP}  # not on its way yet: forgetting the partition must wait
    book.sent(taken)
    assert not book.holds(TP, 0) and book.held([TP]) == {} and book.unsettled([TP]) == set()
    fetched = book.take([other])  # a ShareFetch carries these itself: they are applied before it acquires
    assert fetched == {other: {5: ACCEPT}} and book.held([other]) == {}


def test_session_leaving_is_what_the_next_fetch_forgets() -> None:
    s = ShareSession()
    a, b = (T, 0), (T, 1)
    s.fetch({a, b}, {})
    assert s.leaving({a}) == {b} and s.leaving({a, b}) == set()
    s.reset()
    assert s.leaving(set()) == set()  # no session: nothing to forget


def test_session_opens_then_sends_only_changes_and_acks() -> None:
    s = ShareSession()
    a, b = (T, 0), (T, 1)
    first = s.fetch({a, b}, {})
    assert first["share_session_epoch"] == 0 and len(first["topics"][0]["partitions"]) == 2
    second = s.fetch({a}, {a: batches({3: ACCEPT})})
    assert second["share_session_epoch"] == 1
    assert second["topics"] == [
        {"topic_id": T, "partitions": [{"partition_index": 0, "acknowledgement_batches": batches({3: ACCEPT})}]}
    ]
    assert second["forgotten_topics_data"] == [{"topic_id": T, "partitions": [1]}]
    ack = s.acknowledge({a: batches({4: REJECT})})
    assert ack is not None and ack["share_session_epoch"] == 2
    closing = s.acknowledge({}, close=True)
    assert closing is not None and closing["share_session_epoch"] == CLOSE_EPOCH and not s.is_open
    assert s.acknowledge({}) is None  # no session: nothing to acknowledge in
