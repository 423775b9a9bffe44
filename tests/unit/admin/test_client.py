"""AdminClient without a broker: input checks against confluent-kafka's, the value types, the helpers.

Both clients point at 127.0.0.1:1 (nothing listens): a bad input must raise before any request.
"""

from __future__ import annotations

import logging
import struct
from collections.abc import Callable, Iterator
from typing import Any

import confluent_kafka
import confluent_kafka.admin as ck
import pytest

import kafkawire
import kafkawire.admin
from kafkawire.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    ConsumerGroupState,
    IsolationLevel,
    KafkaError,
    KafkaException,
    NewPartitions,
    NewTopic,
    OffsetSpec,
    ResourceType,
    TopicPartition,
)
from kafkawire.admin.client import decode_assignment

NOWHERE = "127.0.0.1:1"


@pytest.fixture(scope="module")
def clients() -> Iterator[tuple[AdminClient, ck.AdminClient]]:
    ours = AdminClient({"bootstrap.servers": NOWHERE})
    theirs = ck.AdminClient({"bootstrap.servers": NOWHERE, "log_level": 0})
    yield ours, theirs
    ours.close()


def _outcome(call: Callable[[], Any]) -> type[BaseException] | None:
    try:
        call()
    except (TypeError, ValueError) as exc:
        return TypeError if isinstance(exc, TypeError) else ValueError
    return None


# (label, call on a client, the module of types) -> both must raise the same exception class.
BAD_INPUTS: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("create_topics empty", lambda a, m: a.create_topics([])),
    ("create_topics None", lambda a, m: a.create_topics(None)),
    ("create_topics num_partitions -5", lambda a, m: a.create_topics([m.NewTopic("x", -5)])),
    ("create_topics num_partitions too big", lambda a, m: a.create_topics([m.NewTopic("x", 100_001)])),
    ("create_topics replication_factor -2", lambda a, m: a.create_topics([m.NewTopic("x", 1, -2)])),
    (
        "create_topics assignment and factor",
        lambda a, m: a.create_topics([m.NewTopic("x", 2, 1, replica_assignment=[[1], [1]])]),
    ),
    (
        "create_topics assignment size",
        lambda a, m: a.create_topics([m.NewTopic("x", 3, replica_assignment=[[1], [1]])]),
    ),
    ("create_topics assignment not a list", lambda a, m: a.create_topics([m.NewTopic("x", 1, replica_assignment="x")])),
    ("create_topics operation_timeout -1", lambda a, m: a.create_topics([m.NewTopic("x", 1)], operation_timeout=-1)),
    ("create_topics operation_timeout str", lambda a, m: a.create_topics([m.NewTopic("x", 1)], operation_timeout="1")),
    ("create_topics request_timeout -1", lambda a, m: a.create_topics([m.NewTopic("x", 1)], request_timeout=-1)),
    ("create_topics validate_only str", lambda a, m: a.create_topics([m.NewTopic("x", 1)], validate_only="yes")),
    ("create_topics unknown keyword", lambda a, m: a.create_topics([m.NewTopic("x", 1)], foo=1)),
    ("NewTopic name int", lambda a, m: m.NewTopic(1, 1)),
    ("NewTopic partitions str", lambda a, m: m.NewTopic("x", "1")),
    ("NewTopic config list", lambda a, m: m.NewTopic("x", 1, config=[("a", "b")])),
    ("delete_topics str", lambda a, m: a.delete_topics("x")),
    ("delete_topics empty", lambda a, m: a.delete_topics([])),
    ("create_partitions empty", lambda a, m: a.create_partitions([])),
    ("create_partitions 0", lambda a, m: a.create_partitions([m.NewPartitions("x", 0)])),
    ("NewPartitions count str", lambda a, m: m.NewPartitions("x", "3")),
    ("describe_configs empty", lambda a, m: a.describe_configs([])),
    ("describe_configs not resources", lambda a, m: a.describe_configs(["x"])),
    ("ConfigResource bad type", lambda a, m: m.ConfigResource("foo", "x")),
    ("ConfigResource no name", lambda a, m: m.ConfigResource("topic", None)),
    ("incremental_alter_configs empty", lambda a, m: a.incremental_alter_configs([])),
    (
        "incremental_alter_configs no entries",
        lambda a, m: a.incremental_alter_configs([m.ConfigResource("topic", "x")]),
    ),
    ("describe_consumer_groups empty", lambda a, m: a.describe_consumer_groups([])),
    ("describe_consumer_groups str", lambda a, m: a.describe_consumer_groups("g")),
    ("delete_records negative partition", lambda a, m: a.delete_records([m.TopicPartition("x", -1, 1)])),
    ("delete_records not a list", lambda a, m: a.delete_records(m.TopicPartition("x", 0, 1))),
    ("list_offsets not a dict", lambda a, m: a.list_offsets([])),
    (
        "list_offsets negative partition",
        lambda a, m: a.list_offsets({m.TopicPartition("x", -1): m.OffsetSpec.latest()}),
    ),
    ("list_offsets spec not OffsetSpec", lambda a, m: a.list_offsets({m.TopicPartition("x", 0): -1})),
    (
        "list_offsets isolation int",
        lambda a, m: a.list_offsets({m.TopicPartition("x", 0): m.OffsetSpec.latest()}, isolation_level=1),
    ),
    ("list_consumer_groups states list", lambda a, m: a.list_consumer_groups(states=[m.ConsumerGroupState.STABLE])),
]


class _TheirTypes:
    """confluent-kafka's types under the names the cases use."""

    NewTopic = ck.NewTopic
    NewPartitions = ck.NewPartitions
    ConfigResource = ck.ConfigResource
    TopicPartition = confluent_kafka.TopicPartition
    OffsetSpec = ck.OffsetSpec
    ConsumerGroupState = confluent_kafka.ConsumerGroupState


class _OurTypes:
    NewTopic = NewTopic
    NewPartitions = NewPartitions
    ConfigResource = ConfigResource
    TopicPartition = TopicPartition
    OffsetSpec = OffsetSpec
    ConsumerGroupState = ConsumerGroupState


@pytest.mark.parametrize("label,call", BAD_INPUTS, ids=[label for label, _ in BAD_INPUTS])
def test_bad_input_raises_like_confluent(
    clients: tuple[AdminClient, ck.AdminClient], label: str, call: Callable[[Any, Any], Any]
) -> None:
    ours, theirs = clients
    expected = _outcome(lambda: call(theirs, _TheirTypes))
    assert expected is not None, f"confluent-kafka accepts {label}"
    assert _outcome(lambda: call(ours, _OurTypes)) is expected


# Inputs confluent-kafka accepts and then fails on every future (or, for duplicates, silently
# merges): kafkawire refuses them at the call, before any request.
REFUSED_EARLY: list[tuple[str, Callable[[AdminClient], Any]]] = [
    ("duplicate topics", lambda a: a.create_topics([NewTopic("x", 1), NewTopic("x", 2)])),
    ("duplicate deletes", lambda a: a.delete_topics(["x", "x"])),
    ("topic name not str", lambda a: a.delete_topics([1])),
    (
        "two BROKER resources",
        lambda a: a.describe_configs([ConfigResource("broker", "1"), ConfigResource("broker", "2")]),
    ),
    ("BROKER name not an id", lambda a: a.describe_configs([ConfigResource("broker", "abc")])),
    ("ANY resource", lambda a: a.describe_configs([ConfigResource("any", "x")])),
    (
        "entry without operation",
        lambda a: a.incremental_alter_configs(
            [ConfigResource("topic", "x", incremental_configs=[ConfigEntry("a", "1")])]
        ),
    ),
    ("duplicate partitions", lambda a: a.delete_records([TopicPartition("x", 0, 1), TopicPartition("x", 0, 2)])),
    ("duplicate groups", lambda a: a.describe_consumer_groups(["g", "g"])),
]


@pytest.mark.parametrize("label,call", REFUSED_EARLY, ids=[label for label, _ in REFUSED_EARLY])
def test_inputs_refused_at_the_call(
    clients: tuple[AdminClient, ck.AdminClient], label: str, call: Callable[[AdminClient], Any]
) -> None:
    assert _outcome(lambda: call(clients[0])) in (TypeError, ValueError)


def test_duplicate_incremental_config_keys_are_an_invalid_arg(clients: tuple[AdminClient, ck.AdminClient]) -> None:
    """As librdkafka refuses them: every future of the call fails with _INVALID_ARG."""
    for admin, module in zip(clients, (kafkawire.admin, ck), strict=True):
        entries = [
            module.ConfigEntry("a", "1", incremental_operation=module.AlterConfigOpType.SET),
            module.ConfigEntry("a", "2", incremental_operation=module.AlterConfigOpType.SET),
        ]
        futures = admin.incremental_alter_configs([module.ConfigResource("topic", "x", incremental_configs=entries)])
        with pytest.raises((KafkaException, confluent_kafka.KafkaException)) as exc:
            next(iter(futures.values())).result(timeout=10)
        assert exc.value.args[0].code() == KafkaError._INVALID_ARG


def test_unknown_configuration_key_is_an_error() -> None:
    with pytest.raises(KafkaException) as exc:
        AdminClient({"bootstrap.servers": NOWHERE, "linger.mss": 5})
    assert exc.value.args[0].code() == KafkaError._INVALID_ARG and "linger.mss" in exc.value.args[0].str()


def test_confluent_configuration_keys_are_accepted() -> None:
    AdminClient(
        {
            "bootstrap.servers": NOWHERE,
            "client.id": "x",
            "logger": logging.getLogger("x"),
            "debug": "admin",
            "retry.backoff.ms": 5,
            "socket.timeout.ms": 1000,
        }
    ).close()


def test_enum_values_match_confluent() -> None:
    pairs = [
        (ResourceType, ck.ResourceType),
        (ConfigSource, ck.ConfigSource),
        (AlterConfigOpType, ck.AlterConfigOpType),
        (IsolationLevel, confluent_kafka.IsolationLevel),
        (ConsumerGroupState, confluent_kafka.ConsumerGroupState),
    ]
    for ours, theirs in pairs:
        assert {m.name: m.value for m in ours} == {m.name: m.value for m in theirs if m.name != "UNKOWN"}, ours


def test_config_resource_behaves_like_confluents() -> None:
    for restype in ("topic", "TOPIC", 2, ResourceType.TOPIC):
        r = ConfigResource(restype, "t")  # type: ignore[arg-type]
        assert r.restype is ResourceType.TOPIC and r.restype_int == 2
    a, b = ConfigResource("topic", "t", set_config={"x": "1"}), ConfigResource("topic", "t")
    assert a == b and hash(a) == hash(b) and {a: 1}[b] == 1
    assert sorted([ConfigResource("broker", "1"), ConfigResource("topic", "z"), ConfigResource("topic", "a")]) == [
        ConfigResource("topic", "a"),
        ConfigResource("topic", "z"),
        ConfigResource("broker", "1"),
    ]
    a.set_config("x", "2", overwrite=False)
    a.set_config("y", "3")
    assert a.set_config_dict == {"x": "1", "y": "3"} and len(a) == 2
    theirs = ck.ConfigResource("topic", "t")
    assert repr(ConfigResource("topic", "t")) == repr(theirs)
    entry, their_entry = ConfigEntry("a", "b"), ck.ConfigEntry("a", "b")
    assert (repr(entry), str(entry)) == (repr(their_entry), str(their_entry))
    assert vars(ConfigEntry("a", "b")).keys() == vars(their_entry).keys()


def test_new_topic_and_partitions_behave_like_confluents() -> None:
    assert (repr(NewTopic("x", 1)), repr(NewPartitions("x", 3))) == (
        repr(ck.NewTopic("x", 1)),
        repr(ck.NewPartitions("x", 3)),
    )
    t, theirs = NewTopic("x"), ck.NewTopic("x")
    assert (t.num_partitions, t.replication_factor, t.replica_assignment, t.config) == (
        theirs.num_partitions,
        theirs.replication_factor,
        theirs.replica_assignment,
        theirs.config,
    )
    assert NewTopic("x", 1) == NewTopic("x", 1) and hash(NewTopic("x", 1)) == hash(NewTopic("x", 1))
    assert NewTopic("x", 1) != NewTopic("x", 2)


def test_offset_spec_values() -> None:
    assert [OffsetSpec.earliest()._value, OffsetSpec.latest()._value, OffsetSpec.max_timestamp()._value] == [
        ck.OffsetSpec.earliest()._value,
        ck.OffsetSpec.latest()._value,
        ck.OffsetSpec.max_timestamp()._value,
    ]
    assert OffsetSpec.for_timestamp(1234).timestamp == 1234 == OffsetSpec.for_timestamp(1234)._value


def _assignment(topics: dict[str, list[int]], user_data: bytes = b"") -> bytes:
    out = struct.pack(">hi", 0, len(topics))
    for name, partitions in topics.items():
        raw = name.encode()
        out += struct.pack(">h", len(raw)) + raw + struct.pack(f">i{len(partitions)}i", len(partitions), *partitions)
    return out + struct.pack(">i", len(user_data)) + user_data


def test_decode_member_assignment() -> None:
    data = _assignment({"orders": [0, 2], "päy": [1]}, b"ud")
    assert [(tp.topic, tp.partition) for tp in decode_assignment(data)] == [("orders", 0), ("orders", 2), ("päy", 1)]
    assert decode_assignment(b"") == [] and decode_assignment(None) == []
    assert decode_assignment(data[:9]) == []  # truncated: not the consumer protocol
    assert decode_assignment(b"\x00\x00\x00\x00\x00\x05\x00\x03abc") == []  # topic count past the end


def test_futures_cannot_be_cancelled_and_fail_on_close() -> None:
    admin = AdminClient({"bootstrap.servers": NOWHERE, "reconnect.backoff.ms": 10})
    futures = admin.create_topics([NewTopic("x", 1)], request_timeout=30)
    assert futures["x"].cancel() is False
    admin.close()
    with pytest.raises(KafkaException) as exc:
        futures["x"].result(5)
    assert exc.value.args[0].code() in (KafkaError._DESTROY, KafkaError._TRANSPORT)


def test_module_constants_and_calls_match_confluent_kafka_admin() -> None:
    """Every constant of confluent_kafka.admin with its value, every public AdminClient call."""
    constants = [n for n in dir(ck) if n.isupper()]
    assert constants and {n: getattr(kafkawire.admin, n, None) for n in constants} == {
        n: getattr(ck, n) for n in constants
    }
    calls = {n for n in dir(ck.AdminClient) if not n.startswith("_")}
    assert calls - set(dir(AdminClient)) == set()


@pytest.mark.parametrize("bits", [(0, 0), (0x0123456789ABCDEF, 0x1122334455667788), (-2, -5), (2**63 - 1, -(2**63))])
def test_uuid_shown_and_split_as_confluent_kafka(bits: tuple[int, int]) -> None:
    ours, theirs = kafkawire.Uuid(*bits), confluent_kafka.Uuid(*bits)
    assert str(ours) == str(theirs) and repr(ours) == repr(theirs)
    assert (ours.get_most_significant_bits(), ours.get_least_significant_bits()) == bits
    assert ours == kafkawire.Uuid(*bits) and hash(ours) == hash(kafkawire.Uuid(*bits))


@pytest.mark.parametrize("bits", [("a", 1), (2**63, 1), (1, -(2**63) - 1)])
def test_uuid_refuses_what_confluent_kafka_refuses(bits: tuple[Any, int]) -> None:
    errors = []
    for cls in (kafkawire.Uuid, confluent_kafka.Uuid):
        with pytest.raises((TypeError, OverflowError)) as exc:
            cls(*bits)
        errors.append(exc.type)
    assert errors[0] is errors[1]


DUPLICATES_IN_FUTURES: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("groups to delete", lambda a, m: a.delete_consumer_groups(["g", "g"], request_timeout=5)),
    ("SCRAM users", lambda a, m: a.describe_user_scram_credentials(["u", "u"], request_timeout=5)),
    ("topics to describe", lambda a, m: a.describe_topics(m.TopicCollection(["t", "t"]), request_timeout=5)),
    ("partitions to elect", lambda a, m: a.elect_leaders(m.ElectionType.PREFERRED, [m.TopicPartition("t", 0)] * 2)),
]


@pytest.mark.parametrize("call", [c for _, c in DUPLICATES_IN_FUTURES], ids=[n for n, _ in DUPLICATES_IN_FUTURES])
def test_duplicates_fail_the_futures_with_invalid_arg(
    clients: tuple[AdminClient, ck.AdminClient], call: Callable[[Any, Any], Any]
) -> None:
    """As librdkafka refuses them: no exception at the call, every future fails _INVALID_ARG."""
    for admin, module in zip(clients, (kafkawire, confluent_kafka), strict=True):
        answer = call(admin, module)
        futures = list(answer.values()) if isinstance(answer, dict) else [answer]
        assert futures
        for fut in futures:
            with pytest.raises((KafkaException, confluent_kafka.KafkaException)) as exc:
                fut.result(timeout=10)
            assert exc.value.args[0].code() == KafkaError._INVALID_ARG
