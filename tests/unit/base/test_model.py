"""The public data model, checked against the installed confluent-kafka wherever its classes can be built."""

from __future__ import annotations

import itertools
import pickle
from typing import Any

import confluent_kafka as ck
import confluent_kafka.admin as ck_admin
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from kafkawire.base import model
from kafkawire.base.model import (
    BrokerMetadata,
    ClusterMetadata,
    Message,
    PartitionMetadata,
    ThrottleEvent,
    TopicMetadata,
    TopicPartition,
    broker_name,
    cluster_metadata_from,
)
from kafkawire.base.record_metadata import RecordMetadata
from kafkawire.core import metadata as core_metadata
from kafkawire.core.kafka_error import KafkaError

# ---------------------------------------------------------------------------------------- constants


@pytest.mark.parametrize(
    "name",
    [
        "TIMESTAMP_NOT_AVAILABLE",
        "TIMESTAMP_CREATE_TIME",
        "TIMESTAMP_LOG_APPEND_TIME",
        "OFFSET_BEGINNING",
        "OFFSET_END",
        "OFFSET_STORED",
        "OFFSET_INVALID",
    ],
)
def test_constants_have_confluents_values(name: str) -> None:
    assert getattr(model, name) == getattr(ck, name)


# ------------------------------------------------------------------------------------------ Message


def _pair(**kwargs: Any) -> tuple[Message, Any]:
    """The same message built by both libraries (errors translated), always by keyword."""
    theirs = dict(kwargs)
    if isinstance(kwargs.get("error"), KafkaError):
        theirs["error"] = ck.KafkaError(kwargs["error"].code())
    return Message(**kwargs), ck.Message(**theirs)


MESSAGE_CASES: list[dict[str, Any]] = [
    {},
    {"topic": "t", "partition": 1, "offset": 5, "key": b"k", "value": b"vv"},
    {"headers": [("a", b"1"), ("a", None)], "timestamp": (1, 1_700_000_000_000)},
    {"headers": {"h": b"x"}, "timestamp": (2, 0)},
    {"headers": []},
    {"timestamp": (0, 5)},
    {"partition": -1, "offset": -1001, "leader_epoch": -1},
    {"partition": 0, "offset": 0, "leader_epoch": 0},
    {"offset": -2},
    {"offset": 2**63 - 1},
    {"latency": 0.25},
    {"latency": 1},
    {"latency": 0},
    {"latency": -1.0},
    {"value": "é"},
    {"value": bytearray(b"xy")},
    {"key": None, "value": None},
    {"error": KafkaError(3)},
    {"leader_epoch": 7},
    {"delivery_count": 3},
    {"delivery_count": 0},
]


def _accessors(m: Any) -> tuple[Any, ...]:
    error = m.error()
    return (
        m.topic(),
        m.partition(),
        m.offset(),
        m.key(),
        m.value(),
        m.deserialized_key(),
        m.deserialized_value(),
        m.headers(),
        m.timestamp(),
        m.latency(),
        None if error is None else error.code(),
        m.leader_epoch(),
        m.delivery_count(),
        len(m),
    )


@pytest.mark.parametrize("kwargs", MESSAGE_CASES, ids=repr)
def test_message_accessors_match_confluent(kwargs: dict[str, Any]) -> None:
    ours, theirs = _pair(**kwargs)
    assert _accessors(ours) == _accessors(theirs)


def test_message_equality_matches_confluent_pairwise() -> None:
    variants: list[dict[str, Any]] = [
        {"value": b"v"},
        {"value": b"w"},
        {"value": "v"},
        {"topic": "a", "value": b"v"},
        {"partition": 1},
        {"partition": 2},
        {"partition": -1},
        {"partition": -5},
        {"offset": -1},
        {"offset": -1001},
        {"key": b"a"},
        {"headers": [("a", b"1")]},
        {"headers": []},
        {"timestamp": (1, 1)},
        {"timestamp": (1, 2)},
        {"timestamp": (0, 0)},
        {"latency": 1.0},
        {"latency": 2.0},
        {"leader_epoch": 1},
        {"leader_epoch": -1},
        {"error": KafkaError(1)},
        {"error": KafkaError(2)},
        {"delivery_count": 2},
        {},
    ]
    built = [_pair(**v) for v in variants]
    for (a_ours, a_theirs), (b_ours, b_theirs) in itertools.product(built, repeat=2):
        assert (a_ours == b_ours) == (a_theirs == b_theirs), (a_ours, b_ours)
        assert (a_ours != b_ours) == (a_theirs != b_theirs)


def test_message_is_unhashable_and_slotted_like_confluent() -> None:
    ours, theirs = _pair(value=b"v")
    for m in (ours, theirs):
        with pytest.raises(TypeError):
            hash(m)
        with pytest.raises(AttributeError):
            setattr(m, "extra", 1)  # noqa: B010
    assert not hasattr(ours, "__dict__")
    assert ours != 5 and theirs != 5


def test_message_setters_match_confluent() -> None:
    ours, theirs = _pair(topic="t", key=b"k", value=b"v", headers=[("a", b"1")])
    for m in (ours, theirs):
        m.set_key(b"k2")
        m.set_value("v2")
        m.set_headers([("x", None)])
        m.set_topic("u")
    assert _accessors(ours) == _accessors(theirs)
    for m in (ours, theirs):
        m.set_key(None)
        m.set_value(None)
        m.set_headers(None)
        m.set_topic(None)
    assert _accessors(ours) == _accessors(theirs)
    ours.set_error(KafkaError(3))
    assert ours.error() == KafkaError(3)
    ours.set_error(None)
    assert ours.error() is None
    # Like confluent-kafka's, a message holds whatever it is given (applications' tests use mocks).
    marker = object()
    for m in (ours, theirs):
        m.set_error(marker)
        assert m.error() is marker


@pytest.mark.parametrize(
    "kwargs",
    [{"timestamp": 5}, {"timestamp": (1,)}, {"timestamp": (1, 2, 3)}, {"partition": "1"}, {"offset": 1.5}],
    ids=repr,
)
def test_message_rejects_what_confluent_rejects(kwargs: dict[str, Any]) -> None:
    with pytest.raises(TypeError):
        ck.Message(**kwargs)
    with pytest.raises(TypeError):
        Message(**kwargs)


def test_message_positional_order_is_confluents() -> None:
    args = ("t", 1, 5, b"k", b"v", [("h", b"x")], KafkaError(3), (1, 99), 0.5, 2, 7)
    for m in (Message(*args), ck.Message(*args)):
        assert (m.timestamp(), m.error(), m.latency(), m.leader_epoch()) == ((1, 99), KafkaError(3), 0.5, 2)
    assert Message(*args).__reduce__()[1] == ck.Message(*args).__reduce__()[1]
    assert Message().__reduce__()[1] == ck.Message().__reduce__()[1]
    for count in (2**15, -(2**15) - 1):  # a share group's delivery count is a 16-bit field
        with pytest.raises(OverflowError):
            Message("t", 0, 0, None, None, None, None, (0, 0), -1.0, -1, count)


def test_message_pickles_with_every_field() -> None:
    m = Message("t", 1, 5, b"k", b"v", [("h", b"x")], KafkaError(3), (1, 99), 0.5, 2, 4)
    back = pickle.loads(pickle.dumps(m))
    assert back == m
    assert _accessors(back) == _accessors(m)


def test_message_repr_is_readable_and_bounded() -> None:
    m = Message("t", 1, 5, b"k", b"x" * 10_000, timestamp=(1, 99))
    text = repr(m)
    assert text.startswith("Message(topic='t', partition=1, offset=5, key=b'k', value=b'xxx")
    assert "(10000 bytes)" in text and len(text) < 300
    assert "timestamp=(1, 99)" in text and text.endswith("error=None)")
    assert "latency" not in text and "headers" not in text


# ----------------------------------------------------------------------------------- RecordMetadata


def test_record_metadata_is_frozen_and_prints_like_java() -> None:
    rm = RecordMetadata("orders", 3, 42, 1_700_000_000_000, model.TIMESTAMP_CREATE_TIME, 3, -1)
    assert str(rm) == "orders-3@42"
    assert rm.has_offset() and rm.has_timestamp()
    with pytest.raises(AttributeError):
        rm.offset = 1  # type: ignore[misc]
    unknown = RecordMetadata("orders", 0, -1, -1, model.TIMESTAMP_NOT_AVAILABLE, -1, -1)
    assert not unknown.has_offset() and not unknown.has_timestamp()
    assert str(unknown) == "orders-0@-1"


# ----------------------------------------------------------------------------------- TopicPartition

TP_CASES: list[tuple[Any, ...]] = [
    ("t",),
    ("t", 1),
    ("t", 1, 5),
    ("t", 1, 5, "md"),
    ("t", 1, 5, "md", 7),
    ("t", 1, 5, "", 0),
    ("t", 0, -2, "x", -1),
    ("", 0),
    ("é", 2**31 - 1, 2**63 - 1),
    ("t,x}", -1, -1000),
]


def _tp_pair(*args: Any) -> tuple[TopicPartition, Any]:
    return TopicPartition(*args), ck.TopicPartition(*args)


@pytest.mark.parametrize("args", TP_CASES, ids=repr)
def test_topic_partition_attributes_and_repr_match_confluent(args: tuple[Any, ...]) -> None:
    ours, theirs = _tp_pair(*args)
    for attr in ("topic", "partition", "offset", "metadata", "leader_epoch", "error"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr
    assert repr(ours) == repr(theirs)
    assert str(ours) == str(theirs)
    if hash(theirs.topic) ^ theirs.partition != -1:  # confluent fails on that one value (a C hash of -1)
        assert hash(ours) == hash(theirs)


def test_topic_partition_keyword_defaults_match_confluent() -> None:
    ours = TopicPartition("t", leader_epoch=-5)
    theirs = ck.TopicPartition("t", leader_epoch=-5)
    assert (
        repr(ours) == repr(theirs) == "TopicPartition{topic=t,partition=-1,offset=-1001,leader_epoch=None,error=None}"
    )
    assert ours.metadata is theirs.metadata is None


def test_topic_partition_comparisons_match_confluent_pairwise() -> None:
    cases = [
        ("a", 1),
        ("a", 1, 5),
        ("a", 1, 6, "m", 3),
        ("a", 2),
        ("a", -1),
        ("b", 0),
        ("B", 0),
        ("é", 0),
        ("z", 0),
        ("", 0),
        ("aa", 0),
    ]
    built = [_tp_pair(*c) for c in cases]
    for (a_ours, a_theirs), (b_ours, b_theirs) in itertools.product(built, repeat=2):
        for op in ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"):
            assert getattr(a_ours, op)(b_ours) == getattr(a_theirs, op)(b_theirs), (a_ours, op, b_ours)
    assert [repr(t) for t in sorted(o for o, _ in built)] == [repr(t) for t in sorted(t for _, t in built)]


_topics = st.text(alphabet=st.characters(exclude_categories=("Cs",), exclude_characters="\x00"), max_size=8)
# confluent orders partitions by int32 subtraction, which overflows (so it claims 0 < -2**31); stay
# where that cannot happen. Real partitions are small and never below -1.
_partitions = st.integers(-1000, 2**30)


@given(_topics, _partitions, _topics, _partitions, st.integers(-(2**63), 2**63 - 1))
def test_topic_partition_semantics_match_confluent_for_any_input(
    t1: str, p1: int, t2: str, p2: int, offset: int
) -> None:
    a_ours, a_theirs = _tp_pair(t1, p1, offset)
    b_ours, b_theirs = _tp_pair(t2, p2)
    assert (a_ours == b_ours) == (a_theirs == b_theirs)
    assert (a_ours < b_ours) == (a_theirs < b_theirs)
    assert (a_ours >= b_ours) == (a_theirs >= b_theirs)
    assert repr(a_ours) == repr(a_theirs)
    assume(hash(t1) ^ p1 != -1)
    assert hash(a_ours) == hash(a_theirs)


def test_topic_partition_mixes_with_confluents_in_dicts() -> None:
    """Same hash and equal keys: a dict keyed by ours finds the same slots as one keyed by theirs."""
    ours = {TopicPartition("t", p, p * 10): p for p in range(8)}
    assert ours[TopicPartition("t", 3)] == 3
    assert TopicPartition("t", 3, 999) in ours
    assert len({TopicPartition("t", 1, 1), TopicPartition("t", 1, 2)}) == 1


@pytest.mark.parametrize(
    ("attr", "value", "writable"),
    [
        ("partition", 3, True),
        ("offset", 10, True),
        ("offset", True, True),
        ("topic", "u", False),
        ("metadata", "m", False),
        ("leader_epoch", 2, False),
        ("error", None, False),
    ],
)
def test_topic_partition_writable_attributes_match_confluent(attr: str, value: Any, writable: bool) -> None:
    ours, theirs = _tp_pair("t", 1, 5)
    for tp in (ours, theirs):
        if writable:
            setattr(tp, attr, value)
            assert getattr(tp, attr) == value
        else:
            with pytest.raises(AttributeError):
                setattr(tp, attr, value)
    assert repr(ours) == repr(theirs)


def test_topic_partition_rejects_what_confluent_rejects() -> None:
    bad_types: list[dict[str, Any]] = [
        {"topic": None},
        {"topic": 1},
        {"topic": "t", "partition": None},
        {"topic": "t", "offset": "x"},
        {"topic": "t", "metadata": 1},
        {"topic": "t", "partition": "1"},
    ]
    for kwargs in bad_types:
        with pytest.raises(TypeError):
            ck.TopicPartition(**kwargs)
        with pytest.raises(TypeError):
            TopicPartition(**kwargs)
    too_big: list[dict[str, Any]] = [
        {"partition": 2**31},
        {"offset": 2**63},
        {"partition": -(2**31) - 1},
        {"leader_epoch": 2**31},
    ]
    for kwargs in too_big:
        with pytest.raises(OverflowError):
            ck.TopicPartition("t", **kwargs)
        with pytest.raises(OverflowError):
            TopicPartition("t", **kwargs)
    ours, theirs = _tp_pair("t", 1, 5)
    for tp in (ours, theirs):
        with pytest.raises(TypeError):
            tp.offset = None
        with pytest.raises(TypeError):
            tp.partition = None
        with pytest.raises(AttributeError):
            setattr(tp, "extra", 1)  # noqa: B010


def test_topic_partition_deliberate_differences() -> None:
    """Where confluent-kafka's behaviour is a bug, ours is the ordinary Python one."""
    tp = TopicPartition("t", 1)
    # confluent raises NotImplementedError comparing with anything else (so even `tp in [None]` fails).
    assert tp != ("t", 1) and tp != None  # noqa: E711
    assert tp not in [None, 5]
    with pytest.raises(TypeError):
        _ = tp < 5  # type: ignore[operator]
    # confluent orders partitions by overflowing int32 subtraction: it claims ("t", 0) < ("t", -2**31).
    assert not TopicPartition("t", 0) < TopicPartition("t", -(2**31))

    # confluent also refuses subclasses, and explicit metadata=None, and cannot pickle.
    class Sub(TopicPartition):
        pass

    assert Sub("t", 1) == tp
    assert TopicPartition("t", 1, 5, None).metadata is None
    with pytest.raises(OverflowError):  # confluent truncates this silently (to 0) with a RuntimeWarning
        tp.partition = 2**40


def test_topic_partition_error_is_set_by_the_client_and_printed_like_confluent() -> None:
    tp = TopicPartition("mytopic", 99, error=KafkaError(3))
    # The format confluent-kafka prints for a committed() result with this error (the error's own
    # text is the errors module's business).
    assert repr(tp) == (
        f"TopicPartition{{topic=mytopic,partition=99,offset=-1001,leader_epoch=None,error={KafkaError(3)!r}}}"
    )
    assert repr(tp).replace(repr(KafkaError(3)), "E") == repr(ck.TopicPartition("mytopic", 99)).replace("None}", "E}")
    back = pickle.loads(pickle.dumps(tp))
    assert repr(back) == repr(tp) and back.error == KafkaError(3)
    with pytest.raises(TypeError):
        TopicPartition("t", error=3)  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------ ThrottleEvent


@pytest.mark.parametrize(
    ("name", "node", "seconds"), [("b1:9092/1", 1, 0.1), ("h", 7, 0.0), ("h", 2, 1.2345), ("h", 3, 3)]
)
def test_throttle_event_matches_confluent(name: str, node: int, seconds: float) -> None:
    ours, theirs = ThrottleEvent(name, node, seconds), ck.ThrottleEvent(name, node, seconds)
    assert str(ours) == str(theirs)
    assert (ours.broker_name, ours.broker_id, ours.throttle_time) == (
        theirs.broker_name,
        theirs.broker_id,
        theirs.throttle_time,
    )
    assert repr(ours) == f"ThrottleEvent(broker_name={name!r}, broker_id={node!r}, throttle_time={seconds!r})"


# ---------------------------------------------------------------------------------- ClusterMetadata


def _theirs(cls: type, **attrs: Any) -> Any:
    obj = cls()
    for k, v in attrs.items():
        setattr(obj, k, v)
    return obj


def test_metadata_defaults_match_confluent() -> None:
    pairs = [
        (ClusterMetadata(), ck_admin.ClusterMetadata()),
        (BrokerMetadata(), ck_admin.BrokerMetadata()),
        (TopicMetadata(), ck_admin.TopicMetadata()),
        (PartitionMetadata(), ck_admin.PartitionMetadata()),
    ]
    for ours, theirs in pairs:
        assert vars(ours) == vars(theirs)
        assert (repr(ours), str(ours)) == (repr(theirs), str(theirs))


def test_metadata_reprs_and_strs_match_confluent() -> None:
    err, their_err = KafkaError(3), ck.KafkaError(3)
    pairs = [
        (ClusterMetadata("abc", 1), _theirs(ck_admin.ClusterMetadata, cluster_id="abc", controller_id=1)),
        (BrokerMetadata(1, "127.0.0.1", 9092), _theirs(ck_admin.BrokerMetadata, id=1, host="127.0.0.1", port=9092)),
        (
            TopicMetadata("t", {0: PartitionMetadata(0)}),
            _theirs(ck_admin.TopicMetadata, topic="t", partitions={0: ck_admin.PartitionMetadata()}),
        ),
        (TopicMetadata("t", {}, err), _theirs(ck_admin.TopicMetadata, topic="t", error=their_err)),
        (PartitionMetadata(2, 1, [1, 2], [1]), _theirs(ck_admin.PartitionMetadata, id=2, leader=1)),
        (PartitionMetadata(2, error=err), _theirs(ck_admin.PartitionMetadata, id=2, error=their_err)),
    ]
    for ours, theirs in pairs:
        # Only the layout is compared: an error's own description is the errors module's business.
        assert (repr(ours).replace(repr(err), "E"), str(ours)) == (
            repr(theirs).replace(repr(their_err), "E"),
            str(theirs),
        )


def test_broker_name_is_librdkafkas() -> None:
    assert broker_name("127.0.0.1", 9092, 1) == "127.0.0.1:9092/1"
    assert broker_name("localhost", 9092, -1) == "localhost:9092/bootstrap"


def test_cluster_metadata_from_core_copies_and_translates_errors() -> None:
    core = core_metadata.ClusterView(
        brokers={1: core_metadata.Broker(1, "h1", 9092, "r1"), 2: core_metadata.Broker(2, "h2", 9093)},
        topics={
            "ok": core_metadata.TopicInfo(
                "ok",
                0,
                {
                    0: core_metadata.PartitionInfo(0, 1, 5, (1, 2), (1,), 0),
                    1: core_metadata.PartitionInfo(1, -1, 5, (2, 1), (), 5),
                },
            ),
            "bad": core_metadata.TopicInfo("bad", 3, {}),
        },
        cluster_id="cid",
        controller_id=2,
    )
    md = cluster_metadata_from(core, 1, broker_name("h1", 9092, 1))
    assert (md.cluster_id, md.controller_id, md.orig_broker_id, md.orig_broker_name) == ("cid", 2, 1, "h1:9092/1")
    assert repr(md) == "ClusterMetadata(cid)"
    assert {i: str(b) for i, b in md.brokers.items()} == {1: "h1:9092/1", 2: "h2:9093/2"}
    ok, bad = md.topics["ok"], md.topics["bad"]
    assert ok.error is None and repr(ok) == "TopicMetadata(ok, 2 partitions)"
    assert bad.error == KafkaError(3) and isinstance(bad.error, KafkaError) and bad.partitions == {}
    p0, p1 = ok.partitions[0], ok.partitions[1]
    assert (p0.id, p0.leader, p0.replicas, p0.isrs, p0.error) == (0, 1, [1, 2], [1], None)
    assert (p1.id, p1.leader, p1.replicas, p1.isrs) == (1, -1, [2, 1], [])
    assert p1.error == KafkaError(5) and repr(p1) == f"PartitionMetadata(1, {KafkaError(5)})"
    # The public objects are the caller's to keep: changing them leaves the client's picture alone.
    p0.replicas.append(9)
    md.topics.clear()
    assert core.topics["ok"].partitions[0].replicas == (1, 2)
    assert set(core.topics) == {"ok", "bad"}


STRINGS = ["hello", "", "नमस्ते दुनिया", "xyz\x00abc", "\x00", "a\udcffb", "x" * 100_000, "\u2028é\U0001f600"]


def _outcome(build: Any, module: Any) -> Any:
    try:
        tp = build(module)
    except Exception as exc:  # the class and text are what a program sees
        return type(exc).__name__, str(exc)
    return "ok", tp.topic, tp.metadata


@pytest.mark.parametrize("text", STRINGS, ids=range(len(STRINGS)))
def test_topic_partition_strings_are_kept_or_refused_as_confluent_kafka_does(text: str) -> None:
    """A NUL would cut a C string short (the broker would keep 'xyz' of 'xyz\\x00abc'): both refuse
    it at construction, as they refuse a lone surrogate; everything else is kept whole."""
    for build in (
        lambda m: m.TopicPartition("t", 0, 1, text),
        lambda m: m.TopicPartition("t", 0, 1, metadata=text),
        lambda m: m.TopicPartition(text, 0, 1),
    ):
        assert _outcome(build, model) == _outcome(build, ck)


# --- differences kept on purpose (README, "differs on purpose"), each pinned against confluent-kafka


def test_kept_kafka_error_is_a_value_not_an_exception() -> None:
    """confluent-kafka's KafkaError can be raised, but no ``except`` catches it (not even
    BaseException: it ends the program), so no program can depend on raising it; kafkawire's is a
    value: raising it is Python's TypeError, KafkaException(err) is what is raised."""
    import subprocess
    import sys

    program = (
        "import {m}\n"
        "try:\n"
        "    raise {m}.KafkaError({m}.KafkaError._TIMED_OUT)\n"
        "except BaseException as exc:\n"
        "    print('caught', type(exc).__name__)\n"
    )
    theirs = subprocess.run([sys.executable, "-c", program.format(m="confluent_kafka")], capture_output=True, text=True)
    assert theirs.returncode != 0 and "caught" not in theirs.stdout
    ours = subprocess.run([sys.executable, "-c", program.format(m="kafkawire")], capture_output=True, text=True)
    assert (ours.returncode, ours.stdout) == (0, "caught TypeError\n")


def test_kept_a_message_made_without_init_is_not_usable() -> None:
    """confluent-kafka's Message.__new__ alone gives a zero-filled message (a C artefact); kafkawire's
    has no fields set, so reading one fails."""
    theirs = ck.Message.__new__(ck.Message)
    assert (theirs.topic(), theirs.offset()) == (None, 0)
    ours = Message.__new__(Message)
    with pytest.raises(AttributeError):
        ours.topic()


def test_kept_uuids_compare_by_value() -> None:
    """confluent-kafka's Uuid compares by identity (two equal ids are unequal); kafkawire's by value."""
    assert ck.Uuid(1, 2) != ck.Uuid(1, 2)
    import kafkawire

    assert kafkawire.Uuid(1, 2) == kafkawire.Uuid(1, 2)
