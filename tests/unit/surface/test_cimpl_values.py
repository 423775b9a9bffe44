"""librdkafka's enum values, the enums built on them, the list-offsets specs and the ``_util``
helpers, each against the installed confluent-kafka's."""

from __future__ import annotations

import random
import re
from enum import Enum
from typing import Any

import confluent_kafka
import confluent_kafka.admin as ck_admin
import confluent_kafka.cimpl as ck_cimpl
import pytest
from confluent_kafka import _util as ck_util
from confluent_kafka._util import librdkafka_string_parser as ck_parser
from confluent_kafka.admin import _listoffsets as ck_listoffsets

import kafkawire
import kafkawire.admin as kw_admin
import kafkawire.cimpl as kw_cimpl
from kafkawire import _util as kw_util
from kafkawire._util import librdkafka_string_parser as kw_parser

CONSTANTS = sorted(n for n in dir(ck_cimpl) if n.isupper() and not n.startswith("_"))
ADMIN_ENUMS = (
    "AclOperation",
    "AclPermissionType",
    "AlterConfigOpType",
    "ConfigSource",
    "ResourcePatternType",
    "ResourceType",
    "ScramMechanism",
)
MODEL_ENUMS = ("ConsumerGroupState", "ConsumerGroupType", "ElectionType", "IsolationLevel")
# Each enum's members and the cimpl prefix of the constants they are built on.
BUILT_ON = {
    "AclOperation": "ACL_OPERATION_",
    "AclPermissionType": "ACL_PERMISSION_TYPE_",
    "AlterConfigOpType": "ALTER_CONFIG_OP_TYPE_",
    "ConfigSource": "CONFIG_SOURCE_",
    "ResourcePatternType": "RESOURCE_PATTERN_",
    "ResourceType": "RESOURCE_",
    "ScramMechanism": "SCRAM_MECHANISM_",
    "ConsumerGroupType": "CONSUMER_GROUP_TYPE_",
    "ElectionType": "ELECTION_TYPE_",
    "IsolationLevel": "ISOLATION_LEVEL_",
}


def test_every_cimpl_constant_has_confluent_kafkas_value_and_type() -> None:
    assert len(CONSTANTS) > 60
    for name in CONSTANTS:
        theirs, ours = getattr(ck_cimpl, name), getattr(kw_cimpl, name)
        assert (type(ours), ours) == (type(theirs), theirs), name


@pytest.mark.parametrize("name", ADMIN_ENUMS + MODEL_ENUMS)
def test_enums_have_confluent_kafkas_members_and_values(name: str) -> None:
    theirs = getattr(ck_admin, name) if name in ADMIN_ENUMS else getattr(confluent_kafka, name)
    ours = getattr(kw_admin, name) if name in ADMIN_ENUMS else getattr(kafkawire, name)
    assert [(n, m.name, m.value, type(m.value)) for n, m in ours.__members__.items()] == [
        (n, m.name, m.value, type(m.value)) for n, m in theirs.__members__.items()
    ]
    assert sorted(ours) == sorted(ours, key=lambda m: m.value)  # they order by value, as there


@pytest.mark.parametrize("name", sorted(BUILT_ON))
def test_enum_values_are_the_cimpl_constants(name: str) -> None:
    enum = getattr(kw_admin, name)
    prefix = BUILT_ON[name]
    for member in enum:
        suffix = member.name.removeprefix("SCRAM_")
        assert member.value == getattr(kw_cimpl, prefix + suffix), (name, member)


def test_group_states_are_the_cimpl_constants() -> None:
    for member in kafkawire.ConsumerGroupState:
        suffix = member.name.replace("REBALANCING", "REBALANCE")
        assert member.value == getattr(kw_cimpl, "CONSUMER_GROUP_STATE_" + suffix)
    assert [t.value for t in kafkawire.AcknowledgeType] == [
        kw_cimpl.SHARE_ACKNOWLEDGE_TYPE_ACCEPT,
        kw_cimpl.SHARE_ACKNOWLEDGE_TYPE_RELEASE,
        kw_cimpl.SHARE_ACKNOWLEDGE_TYPE_REJECT,
    ]


def _spec_shape(module: Any, spec: Any) -> tuple[Any, ...]:
    """What a program sees of a spec: its class's name, whether it is an OffsetSpec, its value,
    its timestamp attribute if any, and its repr with the address and module path cut."""
    address_free = re.sub(r" at 0x[0-9a-f]+", "", repr(spec)).split(".")[-1]
    return (
        type(spec).__name__,
        isinstance(spec, module.OffsetSpec),
        spec._value,
        getattr(spec, "timestamp", "none"),
        address_free,
    )


def _outcome(call: Any) -> Any:
    try:
        return ("ok", call())
    except Exception as e:
        return (type(e).__name__, str(e))


def test_offset_specs_as_confluent_kafkas() -> None:
    for module in (ck_listoffsets, kw_admin):
        assert module.OffsetSpec.earliest() is module.OffsetSpec.earliest()
        assert isinstance(module.OffsetSpec.earliest(), module.EarliestSpec)
        assert isinstance(module.OffsetSpec.latest(), module.LatestSpec)
        assert isinstance(module.OffsetSpec.max_timestamp(), module.MaxTimestampSpec)
        assert isinstance(module.OffsetSpec.for_timestamp(7), module.TimestampSpec)

    def shapes(module: Any) -> list[Any]:
        spec = module.OffsetSpec
        made = [spec.earliest(), spec.latest(), spec.max_timestamp(), spec.for_timestamp(0), spec.for_timestamp(-5)]
        made += [spec(n) for n in (-1, -2, -3, 0, 1234)] + [module.EarliestSpec(), module.TimestampSpec(9)]
        out: list[Any] = [_spec_shape(module, s) for s in made]
        out += [_outcome(lambda: spec(-4)), _outcome(lambda: spec.for_timestamp("x")._value)]
        out += [spec(-2) is spec.earliest(), module.EarliestSpec() is spec.earliest()]
        out += [spec.for_timestamp(3) == spec.for_timestamp(3), spec.latest() == spec.latest()]
        out += [
            [s._value for s in sorted([spec.for_timestamp(5), spec.latest(), spec.earliest(), spec.max_timestamp()])]
        ]
        out += [_outcome(lambda: spec.latest() < 3), _outcome(lambda: spec.for_timestamp(1) < spec.for_timestamp(2))]
        return out

    assert shapes(kw_admin) == shapes(ck_listoffsets)


class _Color(Enum):
    RED = 1
    BLUE = 2


class _Holder:
    def __init__(self, **attrs: Any) -> None:
        self.__dict__.update(attrs)


def test_util_helpers_as_confluent_kafkas() -> None:
    def outcomes(util: Any, kafka_error: Any) -> list[Any]:
        conv, valid = util.ConversionUtil.convert_to_enum, util.ValidationUtil
        held = _Holder(a=None, b="x", c=3)
        calls = [
            lambda: conv("red", _Color),
            lambda: conv("Blue", _Color),
            lambda: conv(2, _Color),
            lambda: conv(_Color.RED, _Color),
            lambda: conv("green", _Color),
            lambda: conv(5, _Color),
            lambda: conv(1.5, _Color),
            lambda: conv("red", int),
            lambda: valid.check_not_none(held, "a"),
            lambda: valid.check_multiple_not_none(held, ["b", "c"]),
            lambda: valid.check_is_string(held, "c"),
            lambda: valid.check_multiple_is_string(held, ["a", "b"]),
            lambda: valid.check_kafka_errors("x"),
            lambda: valid.check_kafka_errors([kafka_error(1), 2]),
            lambda: valid.check_kafka_errors([kafka_error(1)]),
            lambda: valid.check_kafka_error(kafka_error(1)),
            lambda: valid.check_kafka_error("x"),
        ]
        return [_outcome(call) for call in calls]

    assert outcomes(kw_util, kafkawire.KafkaError) == outcomes(ck_util, confluent_kafka.KafkaError)


def test_asyncinit_as_confluent_kafkas() -> None:
    import asyncio

    from confluent_kafka._util.asyncinit import asyncinit as theirs

    from kafkawire._util.asyncinit import asyncinit as ours

    def run(decorate: Any) -> Any:
        @decorate
        class Made:
            async def __init__(self, a: int, b: int = 0) -> None:
                await asyncio.sleep(0)
                self.total = a + b

        async def main() -> Any:
            pending = Made(1, b=2)
            made = await pending
            return (type(pending).__name__, type(made).__name__, made.total)

        return asyncio.run(main())

    assert run(ours) == run(theirs) == ("coroutine", "Made", 3)


def test_librdkafka_string_parser_as_confluent_kafkas() -> None:
    """librdkafka's splitting rules (escapes, whitespace, separators, key=value) on random strings."""
    alphabet = ["a", "b", "=", ",", " ", "\\", "\t", "n", "0", "\u00a0", "k=v", "\\,"]
    rng = random.Random(49)
    for _ in range(5000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        for sep in (",", " ", "="):
            for skip in (True, False):
                assert kw_parser.split(text, sep, skip) == ck_parser.split(text, sep, skip), (text, sep, skip)
        for label in (None, "some.property"):
            assert _outcome(lambda t=text, lb=label: kw_parser.parse_key_values(t, ",", lb)) == _outcome(
                lambda t=text, lb=label: ck_parser.parse_key_values(t, ",", lb)
            ), text
    assert _outcome(lambda: kw_parser.split(None, ",", True)) == _outcome(lambda: ck_parser.split(None, ",", True))  # type: ignore[arg-type]
