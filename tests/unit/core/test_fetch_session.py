"""Incremental fetch sessions (KIP-227): what each Fetch carries, and how answers and errors move
the session (full -> incremental -> reset -> full again), as Java's FetchSessionHandler."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkawire.core.fetch_session import (
    MAX_EPOCH,
    FetchSession,
    SessionRequest,
    answered_partitions,
    partition_share,
    partition_shares,
    session_fields,
)
from kafkawire.core.kafka_error import KafkaError
from kafkawire.core.policy import Action
from kafkawire.core.policy.fetch import FETCH
from kafkawire.protocol import error_codes as ec
from kafkawire.protocol.codec import Struct

A, B, C = ("t", 0), ("t", 1), ("u", 0)
V = 11  # a Fetch version with sessions (Kafka 2.3's highest)

# One session's life, step by step: ("request", wanted) -> (session id, epoch, sent, forgotten);
# ("answer", (top-level error, session id, partitions listed)) -> (believed, session id, next epoch);
# ("lost", None) -> (session id, next epoch).
LIFE: list[tuple[str, Any, Any]] = [
    # No session yet: a full Fetch with epoch 0 asks for one.
    ("request", [(A, 0, 100), (B, 0, 100)], (0, 0, [(A, 0, 100), (B, 0, 100)], [])),
    ("answer", (0, 55, [A, B]), (True, 55, 1)),
    # Only what changed since it was last sent: A moved on, B did not.
    ("request", [(A, 10, 100), (B, 0, 100)], (55, 1, [(A, 10, 100)], [])),
    ("answer", (0, 55, [A]), (True, 55, 2)),
    # B no longer fetched (paused, unassigned, backing off): forgotten; C is new: sent.
    ("request", [(A, 10, 100), (C, 5, 100)], (55, 2, [(C, 5, 100)], [B])),
    ("answer", (0, 55, []), (True, 55, 3)),
    # Nothing changed: an empty incremental Fetch (the broker still reads A and C).
    ("request", [(A, 10, 100), (C, 5, 100)], (55, 3, [], [])),
    ("answer", (0, 55, [C]), (True, 55, 4)),
    # A partition's size changed: sent again; B back: sent again.
    ("request", [(A, 10, 200), (B, 7, 100), (C, 5, 100)], (55, 4, [(A, 10, 200), (B, 7, 100)], [])),
    # The broker lost track of the epoch: its partitions are not believed; full, same id (reopen).
    ("answer", (ec.INVALID_FETCH_SESSION_EPOCH, 0, []), (False, 55, 0)),
    ("request", [(A, 10, 200), (C, 5, 100)], (55, 0, [(A, 10, 200), (C, 5, 100)], [])),
    ("answer", (0, 56, [A, C]), (True, 56, 1)),
    ("request", [(A, 12, 200), (C, 5, 100)], (56, 1, [(A, 12, 200)], [])),
    # The broker has no session by that id: a full Fetch with id 0.
    ("answer", (ec.FETCH_SESSION_ID_NOT_FOUND, 0, []), (False, 0, 0)),
    ("request", [(A, 12, 200), (C, 5, 100)], (0, 0, [(A, 12, 200), (C, 5, 100)], [])),
    ("answer", (0, 57, []), (True, 57, 1)),
    ("request", [(A, 12, 200)], (57, 1, [], [C])),
    # No answer (connection lost, timed out): start over under the old id.
    ("lost", None, (57, 0)),
    ("request", [(A, 12, 200)], (57, 0, [(A, 12, 200)], [])),
    ("answer", (0, 57, [A]), (True, 57, 1)),
    # Any other whole-request error reopens too, as Java's client does.
    ("request", [(A, 13, 200)], (57, 1, [(A, 13, 200)], [])),
    ("answer", (ec.UNKNOWN_SERVER_ERROR, 0, []), (False, 57, 0)),
    ("request", [(A, 13, 200)], (57, 0, [(A, 13, 200)], [])),
    # The broker closed the session (id 0 in an answer): full Fetches again.
    ("answer", (0, 0, [A]), (True, 0, 0)),
    ("request", [(A, 14, 200)], (0, 0, [(A, 14, 200)], [])),
]


def test_a_session_through_full_incremental_error_and_forgotten_partitions() -> None:
    session = FetchSession()
    for i, (step, arg, expected) in enumerate(LIFE):
        if step == "request":
            req = session.request(arg, V)
            assert (req.session_id, req.epoch, req.send, req.forget) == expected, f"step {i}"
        elif step == "answer":
            believed = session.answered(*arg)
            assert (believed, session.id, session.epoch) == expected, f"step {i}"
        else:
            session.lost()
            assert (session.id, session.epoch) == expected, f"step {i}"
    assert (session.full, session.incremental, session.resets) == (6, 7, 4)


def test_a_broker_that_keeps_no_session_gets_full_fetches() -> None:
    session = FetchSession()
    for offset in range(3):
        req = session.request([(A, offset, 100), (B, 0, 100)], V)
        assert (req.session_id, req.epoch, len(req.send), req.forget) == (0, 0, 2, [])
        assert session.answered(0, 0, [A])
    assert (session.full, session.incremental, session.resets) == (3, 0, 0)


def test_below_fetch_v7_no_session_is_asked_for() -> None:
    session = FetchSession()
    req = session.request([(A, 0, 100)], 6)
    assert (req.session_id, req.epoch, req.send) == (0, -1, [(A, 0, 100)])
    assert session.answered(0, 0, [A])
    assert (session.id, session.epoch) == (0, 0)
    assert not session.answered(ec.NOT_LEADER_OR_FOLLOWER, 0, [])  # a whole-request error: not believed
    assert session.resets == 0


def test_a_request_built_again_without_an_answer_is_full() -> None:
    """The first was never answered (queued again on a new connection): its effect is unknown."""
    session = FetchSession()
    session.request([(A, 0, 100)], V)
    session.answered(0, 9, [A])
    session.request([(A, 5, 100)], V)
    again = session.request([(A, 5, 100)], V)
    assert (again.session_id, again.epoch, again.send) == (9, 0, [(A, 5, 100)])


def test_an_answer_outside_the_session_is_not_believed() -> None:
    session = FetchSession()
    session.request([(A, 0, 100)], V)
    assert not session.answered(0, 9, [A, B])  # B was never asked for
    assert (session.id, session.epoch) == (0, 0)
    session.request([(A, 0, 100)], V)
    session.answered(0, 9, [A])
    session.request([(A, 1, 100)], V)
    assert not session.answered(0, 10, [A])  # another session's id
    assert (session.id, session.epoch) == (9, 0)


def test_epochs_wrap_to_one() -> None:
    session = FetchSession()
    session.request([(A, 0, 100)], V)
    session.answered(0, 3, [])
    session.epoch = MAX_EPOCH
    assert session.request([(A, 0, 100)], V).epoch == MAX_EPOCH
    session.answered(0, 3, [])
    assert session.epoch == 1


def test_close_frees_the_session_once() -> None:
    session = FetchSession()
    assert session.close() is None
    session.request([(A, 0, 100)], V)
    session.answered(0, 4, [A])
    closing = session.close()
    assert closing is not None and (closing.session_id, closing.epoch, closing.send, closing.forget) == (4, -1, [], [])
    assert session.close() is None
    assert session.request([(A, 0, 100)], V).epoch == 0


@pytest.mark.parametrize(
    ("code", "action"),
    [
        (ec.FETCH_SESSION_ID_NOT_FOUND, Action.RETRY),
        (ec.INVALID_FETCH_SESSION_EPOCH, Action.RETRY),
        (ec.FETCH_SESSION_TOPIC_ID_ERROR, Action.RETRY),
        (ec.NOT_LEADER_OR_FOLLOWER, Action.REFRESH_METADATA),
        (ec.OFFSET_OUT_OF_RANGE, Action.FAIL),
    ],
)
def test_fetch_policy_asks_the_same_broker_again_after_a_session_error(code: int, action: Action) -> None:
    assert FETCH.action(code) is action


def test_answer_error_names_the_whole_request_error() -> None:
    session = FetchSession()
    session.request([(A, 0, 100)], V)
    error = session.answer_error(Struct(error_code=ec.FETCH_SESSION_ID_NOT_FOUND, session_id=0), [])
    assert error is not None and error.code() == ec.FETCH_SESSION_ID_NOT_FOUND
    session.request([(A, 0, 100)], V)
    error = session.answer_error(Struct(error_code=0, session_id=0), [B])
    assert error is not None and error.code() == KafkaError._BAD_MSG
    session.request([(A, 0, 100)], V)
    assert session.answer_error(Struct(error_code=0, session_id=8), [A]) is None


def test_session_fields_group_partitions_by_topic() -> None:
    req = SessionRequest(55, 3, [(A, 10, 100), (C, 5, 200), (B, 0, 100)], [("v", 2), ("v", 0)])
    fields = session_fields(req, {"t": "id-t", "u": "id-u", "v": "id-v"}.get)
    assert (fields["session_id"], fields["session_epoch"]) == (55, 3)
    assert fields["topics"] == [
        {
            "topic": "t",
            "topic_id": "id-t",
            "partitions": [
                {"partition": 0, "fetch_offset": 10, "partition_max_bytes": 100},
                {"partition": 1, "fetch_offset": 0, "partition_max_bytes": 100},
            ],
        },
        {
            "topic": "u",
            "topic_id": "id-u",
            "partitions": [{"partition": 0, "fetch_offset": 5, "partition_max_bytes": 200}],
        },
    ]
    assert fields["forgotten_topics_data"] == [{"topic": "v", "topic_id": "id-v", "partitions": [2, 0]}]


def test_answered_partitions_by_name_or_topic_id() -> None:
    response = Struct(
        responses=[
            Struct(topic="t", partitions=[Struct(partition_index=0), Struct(partition_index=1)]),
            Struct(topic_id="id-u", partitions=[Struct(partition_index=0)]),
        ]
    )
    assert sorted(answered_partitions(response, {"id-u": "u"})) == [A, B, C]


@pytest.mark.parametrize(
    ("max_bytes", "count", "share"), [(1 << 20, 1, 1 << 20), (1_000_000, 3, 262_144), (5, 10, 1), (100, 0, 64)]
)
def test_partition_share_is_a_power_of_two_within_the_equal_share(max_bytes: int, count: int, share: int) -> None:
    assert partition_share(max_bytes, count) == share


@pytest.mark.parametrize(
    ("max_bytes", "count", "behind", "shares"),
    [
        (1 << 20, 4, 0, (1 << 18, 1 << 18)),  # nothing known behind: the equal share
        (1 << 20, 4, 4, (1 << 18, 1 << 18)),  # all behind: likewise
        # A backlog in 6 of 2,048 partitions (the partitions curve's layout): each of the 6 gets
        # 2 MiB, past a 1 MB batch, where the equal share gave them 8 KiB and the broker nothing.
        (20_374_408, 2048, 6, (2048, 1 << 21)),
        (1000, 10, 1, (16, 512)),
        (5, 10, 3, (1, 1)),  # too little to share: never below one byte, never below the equal share
    ],
)
def test_partitions_behind_share_what_the_idle_ones_leave(
    max_bytes: int, count: int, behind: int, shares: tuple[int, int]
) -> None:
    assert partition_shares(max_bytes, count, behind) == shares


@given(st.integers(1, 1 << 30), st.integers(1, 5000), st.data())
def test_partition_shares_stay_within_the_request(max_bytes: int, count: int, data: st.DataObject) -> None:
    behind = data.draw(st.integers(0, count))
    idle, late = partition_shares(max_bytes, count, behind)
    equal = partition_share(max_bytes, count)
    assert late >= idle and late >= equal
    for share in (idle, late):
        assert share & (share - 1) == 0  # powers of two: a session resends a partition whose size changed
    if equal * count <= max_bytes:  # (a share is at least one byte)
        assert idle * (count - behind) + late * behind <= max_bytes
