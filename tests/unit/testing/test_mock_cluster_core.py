"""kafkawire.testing's decisions without sockets: the partition log (offsets, bounds, producer
sequences, transactions), injected-error answers built from requests, fetch sessions, classic and
KIP-848 group membership, and the dispatcher end to end on encoded frames."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from kafkawire.protocol import error_codes as E
from kafkawire.protocol.apis import API_VERSIONS, FETCH, METADATA, OFFSET_FETCH, PRODUCE
from kafkawire.protocol.headers import decode_response, encode_request, encode_response
from kafkawire.records.batch import BatchBuilder
from kafkawire.records.decoder import decode_batches
from kafkawire.testing.consumer_groups import ConsumerGroup, ConsumerGroups
from kafkawire.testing.dispatch import Dispatcher
from kafkawire.testing.faults import error_response
from kafkawire.testing.fetch_sessions import FetchSessions
from kafkawire.testing.groups import COMPLETING, PREPARING, STABLE, Groups
from kafkawire.testing.log import PartitionLog, split_batches
from kafkawire.testing.state import Broker, ClusterState
from kafkawire.testing.world import World


def batch(values: list[bytes], pid: int = -1, epoch: int = -1, seq: int = -1, txn: bool = False) -> bytes:
    builder = BatchBuilder()
    for value in values:
        builder.append(1000, None, value)
    return builder.build(pid, epoch, seq, transactional=txn)


def append(log: PartitionLog, data: bytes) -> tuple[int, int]:
    [(raw, info)], error = split_batches(data)
    assert error == E.NONE
    error, duplicate = log.check_producer(info)
    if error or duplicate is not None:
        return error, -1 if duplicate is None else duplicate
    return E.NONE, log.append(raw, info)


def test_offsets_are_assigned_and_reads_start_at_the_batch_holding_the_offset() -> None:
    log = PartitionLog()
    assert append(log, batch([b"a", b"b"])) == (E.NONE, 0)
    assert append(log, batch([b"c"])) == (E.NONE, 2)
    read = decode_batches(log.read(1, 1 << 20, log.end))
    assert [(b.base_offset, [r.value for r in b.records]) for b in read] == [(0, [b"a", b"b"]), (2, [b"c"])]
    assert log.read(2, 1, log.end) and not log.read(3, 1 << 20, log.end)


def test_a_damaged_batch_is_refused() -> None:
    damaged = bytearray(batch([b"x"]))
    damaged[-1] ^= 0xFF
    assert split_batches(bytes(damaged)) == ([], E.CORRUPT_MESSAGE)


def test_the_log_is_bounded_and_its_start_moves() -> None:
    log = PartitionLog(max_bytes=300)
    for i in range(10):
        append(log, batch([b"%d" % i * 20]))
    assert log.size <= 300 and log.log_start > 0 and log.end == 10
    assert decode_batches(log.read(log.log_start, 1 << 20, log.end))[0].base_offset == log.log_start


def test_idempotent_sequences_duplicates_gaps_and_fencing() -> None:
    log = PartitionLog()
    assert append(log, batch([b"a", b"b"], pid=7, epoch=0, seq=0)) == (E.NONE, 0)
    assert append(log, batch([b"a", b"b"], pid=7, epoch=0, seq=0)) == (E.NONE, 0)  # a retry: the first offset
    assert append(log, batch([b"d"], pid=7, epoch=0, seq=5))[0] == E.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert append(log, batch([b"c"], pid=7, epoch=0, seq=2)) == (E.NONE, 2)
    assert append(log, batch([b"e"], pid=7, epoch=1, seq=0)) == (E.NONE, 3)
    assert append(log, batch([b"f"], pid=7, epoch=0, seq=3))[0] == E.INVALID_PRODUCER_EPOCH
    assert log.end == 4


def test_transactions_hold_the_stable_offset_and_list_aborts() -> None:
    log = PartitionLog()
    append(log, batch([b"t1"], pid=9, epoch=0, seq=0, txn=True))
    append(log, batch([b"plain"]))
    assert (log.last_stable, log.end) == (0, 2)
    log.write_marker(9, 0, False, 1000)
    assert (log.last_stable, log.end) == (3, 3)
    assert log.aborted_between(0, 3) == [(9, 0)]
    markers = [b for b in decode_batches(log.read(0, 1 << 20, log.end)) if b.is_control]
    assert [(m.base_offset, m.producer_id) for m in markers] == [(2, 9)]


def test_an_injected_error_answers_every_partition_of_the_request() -> None:
    request = {
        "acks": -1,
        "timeout_ms": 1000,
        "topic_data": [{"name": "t", "partition_data": [{"index": 0, "records": b""}, {"index": 3, "records": b""}]}],
    }
    body = error_response(PRODUCE, 7, request, E.NOT_LEADER_OR_FOLLOWER)
    frame = encode_response(PRODUCE, 7, 5, body)
    _, answer = decode_response(PRODUCE, 7, frame)
    assert [(p.index, p.error_code) for p in answer.responses[0].partition_responses] == [
        (0, E.NOT_LEADER_OR_FOLLOWER),
        (3, E.NOT_LEADER_OR_FOLLOWER),
    ]
    fetched = error_response(OFFSET_FETCH, 8, {"groups": [{"group_id": "g", "topics": None}]}, E.NOT_COORDINATOR)
    assert fetched == {"groups": [{"group_id": "g", "error_code": E.NOT_COORDINATOR}]}


def test_fetch_sessions_full_then_incremental() -> None:
    sessions = FetchSessions()
    entries = {("t", 0): {"fetch_offset": 0}, ("t", 1): {"fetch_offset": 0}}
    error, session, wanted = sessions.open(0, 0, entries, [])
    assert error == E.NONE and session is not None and set(wanted) == set(entries)
    error, again, wanted = sessions.open(session.session_id, 1, {}, [("t", 1)])
    assert (error, again is session, set(wanted)) == (E.NONE, True, {("t", 0)})
    assert sessions.open(session.session_id, 1, {}, [])[0] == E.INVALID_FETCH_SESSION_EPOCH
    assert sessions.open(12345, 1, {}, [])[0] == E.FETCH_SESSION_ID_NOT_FOUND
    assert sessions.open(0, -1, entries, [])[1] is None  # sessionless


def join_body(protocols: list[tuple[str, bytes]]) -> Any:
    return SimpleNamespace(
        protocol_type="consumer",
        protocols=[SimpleNamespace(name=n, metadata=m) for n, m in protocols],
        group_instance_id=None,
        session_timeout_ms=10_000,
        rebalance_timeout_ms=30_000,
    )


def test_a_classic_rebalance_waits_for_every_member_then_the_leader_assigns() -> None:
    groups = Groups()
    group = groups.get("g", create=True)
    assert group is not None
    _, first = groups.join(group, "", join_body([("range", b"m1")]), "c", 0)
    assert groups.join_result(group, first, 10, False) is None  # the initial delay for more members
    _, second = groups.join(group, "", join_body([("roundrobin", b"x"), ("range", b"m2")]), "c", 50)
    leader_answer = groups.join_result(group, first, 1000, False)
    assert leader_answer is not None and group.state == COMPLETING
    assert leader_answer["protocol_name"] == "range" and leader_answer["leader"] == first
    assert sorted(m["metadata"] for m in leader_answer["members"]) == [b"m1", b"m2"]
    assert groups.join_result(group, second, 1000, False)["members"] == []  # type: ignore[index]
    follower_sync = SimpleNamespace(member_id=second, generation_id=group.generation, assignments=[])
    assert groups.sync(group, follower_sync, 1000) == E.NONE
    assert groups.sync_result(group, second, group.generation, False) is None
    leader_sync = SimpleNamespace(
        member_id=first,
        generation_id=group.generation,
        assignments=[
            SimpleNamespace(member_id=first, assignment=b"A1"),
            SimpleNamespace(member_id=second, assignment=b"A2"),
        ],
    )
    assert groups.sync(group, leader_sync, 1000) == E.NONE and group.state == STABLE
    assert groups.sync_result(group, second, group.generation, False)["assignment"] == b"A2"  # type: ignore[index]
    assert groups.heartbeat(group, second, group.generation - 1, 1000) == E.ILLEGAL_GENERATION
    assert groups.leave(group, second, 1000) == E.NONE and group.state == PREPARING
    assert groups.heartbeat(group, first, group.generation, 1000) == E.REBALANCE_IN_PROGRESS
    groups.expire(1000 + 10_001)
    assert not group.members


def test_kip848_members_get_disjoint_partitions_once_the_owner_lets_go() -> None:
    state = ClusterState([Broker(1, "127.0.0.1", 1)])
    state.create_topic("t", 4)
    topic_id = state.topics["t"].topic_id
    groups = ConsumerGroups()
    group = groups.groups["g"] = ConsumerGroup("g")

    def beat(member: str, epoch: int, owned: list[int] | None) -> dict[str, Any]:
        tps = None if owned is None else [SimpleNamespace(topic_id=topic_id, partitions=owned)]
        body = SimpleNamespace(
            member_id=member,
            member_epoch=epoch,
            subscribed_topic_names=["t"],
            subscribed_topic_regex=None,
            topic_partitions=tps,
        )
        return groups.heartbeat(group, body, state, 0)

    first = beat("a", 0, [])
    assert first["assignment"]["topic_partitions"][0]["partitions"] == [0, 1, 2, 3]
    second = beat("b", 0, [])
    assert second["assignment"]["topic_partitions"] == []  # a still owns everything
    revoke = beat("a", first["member_epoch"], [0, 1, 2, 3])
    kept = revoke["assignment"]["topic_partitions"][0]["partitions"]
    beat("a", revoke["member_epoch"], kept)
    given = beat("b", second["member_epoch"], [])["assignment"]["topic_partitions"][0]["partitions"]
    assert sorted(kept + given) == [0, 1, 2, 3] and not set(kept) & set(given)
    assert beat("c", 5, None)["error_code"] == E.UNKNOWN_MEMBER_ID


def test_the_dispatcher_answers_encoded_requests_and_records_them() -> None:
    world = World(ClusterState([Broker(1, "127.0.0.1", 9092)]))
    world.state.create_topic("t", 1)
    dispatcher = Dispatcher(world)
    answers: list[bytes | None] = []

    def ask(api: Any, version: int, body: dict[str, Any]) -> Any:
        dispatcher.handle(
            1, 1, encode_request(api, version, 7, "test", body), 0, lambda data, delay: answers.append(data)
        )
        frame = answers[-1]
        assert frame is not None
        return decode_response(api, version, frame[4:])[1]

    versions = ask(API_VERSIONS, 3, {})
    assert {k.api_key for k in versions.api_keys} >= {0, 1, 3, 18, 68}
    world.faults.versions[PRODUCE.key] = (-1, -1)
    assert PRODUCE.key not in {k.api_key for k in ask(API_VERSIONS, 3, {}).api_keys}
    metadata = ask(METADATA, 12, {"topics": None})
    assert [(t.name, len(t.partitions)) for t in metadata.topics] == [("t", 1)]
    world.faults.push(FETCH.key, [(E.NOT_LEADER_OR_FOLLOWER, 0)])
    fetch_body = {
        "max_wait_ms": 0,
        "min_bytes": 0,
        "topics": [{"topic": "t", "partitions": [{"partition": 0, "fetch_offset": 0, "partition_max_bytes": 100}]}],
    }
    assert ask(FETCH, 11, fetch_body).responses[0].partitions[0].error_code == E.NOT_LEADER_OR_FOLLOWER
    assert ask(FETCH, 11, fetch_body).responses[0].partitions[0].error_code == E.NONE
    assert [r.api_name for r in dispatcher.history] == ["ApiVersions", "ApiVersions", "Metadata", "Fetch", "Fetch"]
    dispatcher.handle(1, 1, b"\x00\x00", 0, lambda data, delay: answers.append(data))
    assert answers[-1] is None  # garbage closes the connection


def test_followers_report_their_own_watermarks_and_readers_with_a_rack_are_sent_there() -> None:
    world = World(ClusterState([Broker(1, "127.0.0.1", 1), Broker(2, "127.0.0.1", 2)]))
    world.state.create_topic("t", 1, 2)
    partition = world.state.partition("t", 0)
    assert partition is not None and partition.leader == 1
    for value in (b"a", b"b", b"c"):
        append(partition.log, batch([value]))
    partition.follower, partition.follower_wmarks = 2, (0, 1)
    dispatcher = Dispatcher(world)
    answers: list[bytes | None] = []

    def fetch(broker: int, rack: str) -> Any:
        body = {
            "max_wait_ms": 0,
            "min_bytes": 0,
            "rack_id": rack,
            "topics": [
                {"topic": "t", "partitions": [{"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1 << 20}]}
            ],
        }
        dispatcher.handle(broker, broker, encode_request(FETCH, 11, 1, "c", body), 0, lambda d, _: answers.append(d))
        frame = answers[-1]
        assert frame is not None
        return decode_response(FETCH, 11, frame[4:])[1].responses[0].partitions[0]

    redirected = fetch(1, "rack-a")
    assert (redirected.preferred_read_replica, bytes(redirected.records)) == (2, b"")
    from_follower = fetch(2, "rack-a")
    assert from_follower.high_watermark == 1
    assert [b.base_offset for b in decode_batches(from_follower.records)] == [0]
    assert fetch(1, "").high_watermark == 3


def test_a_pushed_transport_error_drops_the_connection_instead_of_answering() -> None:
    world = World(ClusterState([Broker(1, "127.0.0.1", 1)]))
    dispatcher = Dispatcher(world)
    world.faults.push(METADATA.key, [(-195, 0)])
    answers: list[bytes | None] = []
    request = encode_request(METADATA, 12, 1, "c", {"topics": None})
    for _ in range(2):
        dispatcher.handle(1, 1, request, 0, lambda d, _: answers.append(d))
    assert answers[0] is None and answers[1] is not None


def test_delete_records_moves_the_log_start_and_drops_whole_batches_before_it() -> None:
    log = PartitionLog()
    append(log, batch([b"a", b"b"]))
    append(log, batch([b"c"]))
    log.delete_before(1)
    assert (log.log_start, len(log.batches)) == (1, 2)
    log.delete_before(2)
    assert (log.log_start, len(log.batches), log.end) == (2, 1, 3)
