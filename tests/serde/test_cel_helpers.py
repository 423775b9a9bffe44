"""The functions Confluent's CEL environment adds (rules.cel.extra_func's EXTRA_FUNCS: variant,
variants.*, timestamp, string.format, the namespaced-call and has() runner), differential: the same
expression on the same record through confluent-kafka's InterpretedRunner, EXTRA_FUNCS and
msg_to_cel and through kafkawire's, the answers (or that both fail) compared; then the same rules
through both clients' CEL executors. Paths and documents are also drawn by hypothesis."""

from __future__ import annotations

import datetime
import decimal
import json
from typing import Any

import pytest

pytest.importorskip("celpy")
pytest.importorskip("confluent_kafka.schema_registry.rules.cel.variant_funcs")

import celpy
import confluent_kafka.schema_registry.confluent.type.variant_utils as their_variants
import confluent_kafka.schema_registry.rules.cel.cel_executor as their_executor
import confluent_kafka.schema_registry.rules.cel.string_format as their_format
import confluent_kafka.schema_registry.rules.cel.timestamp_funcs as their_timestamps
import confluent_kafka.schema_registry.rules.cel.variant_path as their_paths
from celpy import celtypes
from confluent_kafka.schema_registry import Schema as CkSchema
from confluent_kafka.schema_registry.confluent.type import variant_pb2 as their_variant_pb2
from confluent_kafka.schema_registry.schema_registry_client import Rule as CkRule
from confluent_kafka.schema_registry.schema_registry_client import RuleKind as CkRuleKind
from confluent_kafka.schema_registry.schema_registry_client import RuleMode as CkRuleMode
from confluent_kafka.schema_registry.serde import RuleContext as CkRuleContext
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kafkawire.schema_registry.confluent.type.variant_utils as our_variants
import kafkawire.schema_registry.rules.cel.cel_executor as our_executor
import kafkawire.schema_registry.rules.cel.string_format as our_format
import kafkawire.schema_registry.rules.cel.timestamp_funcs as our_timestamps
import kafkawire.schema_registry.rules.cel.variant_path as our_paths
from kafkawire.schema_registry.common.rules import RuleContext
from kafkawire.schema_registry.common.schema_registry_client import Rule, RuleKind, RuleMode
from kafkawire.schema_registry.confluent.type import variant_pb2 as our_variant_pb2

DOC = {
    "a": {"b": [1, "two", {"c": None}]},
    "n": 42,
    "big": 2**40,
    "f": 1.5,
    "s": "hé",
    "t": True,
    "nil": None,
    "dec": 12345678901234567890123,
    "arr": [10, 20, 30],
    "key with space": 1,
    "é": "accent",
}
_DOC_VARIANT = their_variants.parse_json(json.dumps(DOC))


def _builder_variant(module: Any, name: str, *args: Any) -> Any:
    builder = module.VariantBuilder()
    getattr(builder, name)(*args)
    return builder.build()


TYPED = {
    "ts": ("append_timestamp_tz", 1_700_000_000_123_456),
    "tsn": ("append_timestamp_nanos_ntz", -1),
    "tsfar": ("append_timestamp_tz", 2**62),
    "date": ("append_date", 19000),
    "time": ("append_time", 3_600_000_000),
    "bin": ("append_binary", b"\x00\xff"),
    "flt": ("append_float", 0.1),
    "d4": ("append_decimal", decimal.Decimal("-1.25")),
    "d16": ("append_decimal", decimal.Decimal("1234567890123456789012345.5")),
    "vnull": ("append_null",),
}


def _record() -> dict[str, Any]:
    """One record with each shape a variant field takes (Avro's {metadata, value} record), a
    timestamp of each kind and a few scalars."""
    record: dict[str, Any] = {"doc": {"metadata": _DOC_VARIANT.metadata, "value": _DOC_VARIANT.value}}
    for name, (method, *args) in TYPED.items():
        built = _builder_variant(their_variants, method, *args)
        record[name] = {"metadata": built.metadata, "value": built.value}
    record["half"] = {"metadata": _DOC_VARIANT.metadata}
    record["empty"] = {"metadata": b"", "value": b""}
    record["when"] = datetime.datetime(2024, 5, 1, 12, 30, 15, 250000, tzinfo=datetime.timezone.utc)
    record["naive"] = datetime.datetime(2024, 5, 1, 12, 30)
    record["i"] = 7
    record["x"] = 2.5
    record["text"] = 'say "hi"\n'
    record["raw"] = b"\x01\xab"
    record["amount"] = decimal.Decimal("12.340")
    record["items"] = ["a", 1, 2.5, True, b"\x02"]
    return record


V = "variant(message.doc)"
D = "decimal('12.345')"
DECIMAL_EXPRESSIONS = [
    D,
    "decimal('-0.00')",
    "decimal('1e40')",
    "decimal('1E-5')",
    "decimal('+7')",
    "decimal('1_000')",
    "decimal(' 1')",
    "decimal('NaN')",
    "decimal('inf')",
    "decimal('1e-2147483648')",
    "decimal('1e2147483647')",
    "decimal('abc')",
    "decimal(5)",
    "decimal(-5)",
    "decimal(0.1)",
    "decimal(1e300)",
    "decimal(true)",
    "decimal(null)",
    "decimal(b'\\x30\\x39', 2)",
    "decimal(b'\\xff', 0)",
    "decimal(b'', 5)",
    "decimal(b'\\x01', -3)",
    "decimal(b'\\x01', 1u)",
    "decimal(b'\\x01', 2.0)",
    "decimal(b'\\x01', 3000000000)",
    "decimal(b'\\x01')",
    "decimal('1', 2)",
    "decimal(1, 2, 3)",
    "decimal(message.amount)",
    "decimal(message.amount) == decimal('12.340')",
    "message.amount == decimal('12.34')",
    "message.amount != decimal('12.34')",
    "decimal('12.34') in [message.amount]",
    "decimal('1') in [1, 2]",
    "decimal('1') in {'a': 1}",
    "[decimal('1.0')] == [decimal('1')]",
    "{'k': decimal('1.0')} == {'k': decimal('1.00')}",
    "{'k': decimal('1.0')} == {'j': decimal('1.00')}",
    "decimal('1') == 1",
    "decimal('1') != 1",
    "1 == 1",
    "'a' != 'b'",
    "2 in [1, 2]",
    f"string({D})",
    "string(decimal('-0.000'))",
    "string(decimal('1e5'))",
    "string(decimal('1e20000000'))",
    "string(message.amount)",
    "string(true)",
    "string(null)",
    "string([1])",
    "string({'a': 1})",
    "string(1u)",
    "string(1.5)",
    "string(b'hi')",
    "string('s')",
    "string(duration('3s'))",
    "string(timestamp('2023-11-14T22:13:20.123Z'))",
    "string(timestamp('2023-11-14T22:13:20Z'))",
    "string(timestamp(1700000000123456, 6))",
    f"double({D})",
    "double(decimal('1e400'))",
    "double(message.amount)",
    "double(true)",
    "double(b'1')",
    "double('2.5')",
    "double(3)",
    "double([1])",
    *[
        f"decimals.{name}({D}, decimal('{other}'))"
        for name in ("eq", "lt", "le", "gt", "ge", "add", "sub", "mul", "div", "mod", "greatest", "least")
        for other in ("12.345", "-3", "0", "0.001", "1e-40", "99999999999999999999999999999999999999999")
    ],
    "decimals.add(decimal('1e2147483647'), decimal('1e-2147483647'))",
    "decimals.add(decimal('0e2000000000'), decimal('0e-2000000000'))",
    "decimals.add(decimal('0e-2000000000'), decimal('1'))",
    "decimals.sub(decimal('1e9000000'), decimal('1'))",
    "decimals.mul(decimal('1e2147483647'), decimal('3'))",
    "decimals.div(decimal('1'), decimal('3'))",
    "decimals.div(decimal('1e1000000'), decimal('7'))",
    "decimals.mod(decimal('1e2147483647'), decimal('3'))",
    "decimals.mod(decimal('1e-2147483647'), decimal('1e2147483647'))",
    "decimals.mod(decimal('-7.5'), decimal('2'))",
    "decimals.add(1, 2)",
    "decimals.add('1.5', 2.25)",
    "decimals.add(true, 1)",
    "decimals.add(message.amount, decimal('0.01'))",
    *[
        f"decimals.{name}(decimal('{value}'))"
        for name in ("sqrt", "neg", "abs", "sign", "round", "trunc", "floor", "ceil")
        for value in ("0", "-0.00", "9.0", "2", "-2.5", "2.5", "0.0001", "1.44", "1e-100", "16E+2", "123.456")
    ],
    *[
        f"decimals.{name}(decimal('{value}'), {scale})"
        for name in ("round", "trunc")
        for value in ("123.456", "-2.5", "0", "1e-1000000")
        for scale in ("0", "2", "-1", "5", "2147483647", "-2147483648")
    ],
    "decimals.round(decimal('1'), 1u)",
    "decimals.round(decimal('1'), 1.0)",
    "decimals.round(decimal('1'), 1, 2)",
    "decimals.floor(decimal('1.5'), 1)",
    "decimals.sqrt(decimal('-1'))",
    "decimals.sqrt(decimal('1.' + '0' * 100))",
    "decimals.sqrt(decimal('0.000'))",
    "decimals.sqrt(decimal('4E+3'))",
    "decimals.sqrt(decimal('1E+3'))",
    "decimals.sqrt(decimal('0E-5'))",
    "decimals.div(decimal('0'), decimal('3.00'))",
    "decimals.div(decimal('1.' + '0' * 40), decimal('1'))",
]
EXPRESSIONS = [
    # variant() and variants.*
    f"variants.type({V})",
    f"variants.toJson({V})",
    f"variants.toJson(variants.path({V}, '$.a.b[2]'))",
    f"variants.path({V}, '$.a.b[1]') == variants.parseJson('\"two\"')",
    f"variants.path({V}, '$[\"key with space\"]') != null",
    f"variants.path({V}, '$.é')",
    f"variants.path({V}, '$.missing') == null",
    f"variants.path({V}, '$.a.b[9]') == null",
    f"variants.path({V}, '$.n.deeper') == null",
    f"variants.path({V}, 'a.b')",
    f"variants.path({V}, '$.a[-1]')",
    f"variants.path({V}, '$[\"unterminated')",
    f"variants.path({V}, 1)",
    "variants.path(null, '$.a')",
    "variants.path(null, 1)",
    f"variants.as(variants.path({V}, '$.n'), 'int') + 1",
    f"variants.as(variants.path({V}, '$.big'), 'int')",
    f"variants.as(variants.path({V}, '$.f'), 'double')",
    f"variants.as(variants.path({V}, '$.s'), 'string')",
    f"variants.as(variants.path({V}, '$.t'), 'boolean')",
    f"variants.as(variants.path({V}, '$.dec'), 'decimal')",
    f"variants.as(variants.path({V}, '$.s'), 'int')",
    f"variants.tryAs(variants.path({V}, '$.s'), 'int') == null",
    f"variants.tryAs(variants.path({V}, '$.s'), 'nonsense') == null",
    f"variants.as(variants.path({V}, '$.s'), 'nonsense')",
    f"variants.as({V}, 'object')",
    f"variants.tryAs({V}, 'array')",
    f"variants.as({V}, 1)",
    f"variants.field({V}, 'n') == variants.parseJson('42')",
    f"variants.field({V}, 'absent') == null",
    f"variants.field({V}, 1)",
    f"variants.field(variants.field({V}, 'arr'), 'x') == null",
    f"variants.toJson(variants.index(variants.field({V}, 'arr'), 2))",
    f"variants.index(variants.field({V}, 'arr'), 3) == null",
    f"variants.index(variants.field({V}, 'arr'), -1) == null",
    f"variants.index(variants.field({V}, 'arr'), 1.0)",
    f"variants.index(variants.field({V}, 'arr'), 1u)",
    f"variants.index({V}, 0) == null",
    f"variants.isNull(variants.path({V}, '$.nil'))",
    f"variants.isNull(variants.path({V}, '$.absent'))",
    f"variants.isNull({V})",
    "variants.isNull(variant(message.vnull))",
    "variants.isNull(1)",
    "variants.isNull(message.vnull)",
    "variants.type(message.doc)",
    "variants.type(message.half)",
    "variants.type(1)",
    "variant(message.empty) == null",
    "variant(null) == null",
    "variant('text')",
    "variant(1)",
    "variant(message.half)",
    "variants.toJson(variant(message.doc.value, message.doc.metadata))",
    "variant(message.doc.value, b'')",
    "variant(message.doc.value, 'x')",
    'variants.toJson(variants.parseJson(\'[1, 2.5, "x", null, {"k": []}]\'))',
    "variants.parseJson('{bad')",
    "variants.parseJson(1)",
    "variants.tryParseJson('{bad') == null",
    "variants.tryParseJson(1)",
    "variants.type(variants.parseJson('123456789012345678901234567890'))",
    *[f"variants.type(variant(message.{name}))" for name in TYPED],
    *[f"variants.toJson(variant(message.{name}))" for name in TYPED],
    *[f"variants.tryAs(variant(message.{name}), 'timestamp')" for name in TYPED],
    *[f"variants.tryAs(variant(message.{name}), 'double')" for name in TYPED],
    *[f"variants.tryAs(variant(message.{name}), 'bytes')" for name in TYPED],
    *[f"variants.tryAs(variant(message.{name}), 'decimal')" for name in TYPED],
    "variants.as(variant(message.tsfar), 'timestamp')",
    "variants.as(variant(message.date), 'date')",
    "variants.as(variant(message.ts), 'timestamp') > timestamp('2023-01-01T00:00:00Z')",
    # timestamp(...)
    "timestamp(0)",
    "timestamp(1700000000)",
    "timestamp(-1)",
    "timestamp(1700000000123, 3)",
    "timestamp(1700000000123456, 6)",
    "timestamp(-1, 9)",
    "timestamp(1700000000123456789, 9)",
    "timestamp(1, 2)",
    "timestamp(1.5, 3)",
    "timestamp(1, 3u)",
    "timestamp(true)",
    "timestamp(null)",
    "timestamp(1u)",
    "timestamp(99999999999999)",
    "timestamp(99999999999999999, 3)",
    "timestamp('2023-11-14T22:13:20.5Z')",
    "timestamp('not a time')",
    "timestamp(message.when)",
    "timestamp(message.naive)",
    "timestamp(message.when) == message.when",
    "timestamp(2009, 2, 13)",
    "timestamp(1700000000).getFullYear()",
    # string.format
    "'%d and %s'.format([message.i, message.text])",
    "'%.2f|%f|%.0f|%e|%.3e'.format([message.x, message.x, message.x, message.x, 1234.5678])",
    "'%f'.format([3])",
    "'%x %X %o %b'.format([255, 255, 8, 5])",
    "'%x'.format([message.raw])",
    "'%X'.format(['hi'])",
    "'%b'.format([true])",
    "'%d'.format([1u])",
    "'%s'.format([message.raw])",
    "'%s'.format([message.items])",
    "'%s'.format([[message.text, 1u]])",
    "'%s|%s'.format([1.5, true])",
    "'100%%'.format([])",
    "'%d'.format([])",
    "'%d'.format([1, 2])",
    "'%'.format([1])",
    "'%.'.format([1])",
    "'%q'.format([1])",
    "'%d'.format([1.5])",
    "'%o'.format(['x'])",
    "'%x'.format([1.5])",
    # decimal(...) and decimals.*
    *DECIMAL_EXPRESSIONS,
    # the namespaced call leaves methods and macros alone
    "'hello'.startsWith('he')",
    "[1, 2, 3].all(x, x > 0)",
    "[1, 2, 3].map(x, x * 2)",
    "has(message.i) && !has(message.nothing)",
    "variants.nope(1)",
]


def _plain(value: Any, exact: bool = True) -> Any:
    """A CEL answer of either client as a comparable value (a Variant by its bytes), each scalar
    with its CEL type (``exact``: an executor's answer is plain Python on one client, celpy's
    values on the other, and only its Python type is compared)."""
    if isinstance(value, (their_variants.Variant, our_variants.Variant)):
        return ("variant", value.standalone_value_bytes(), value.metadata)
    if isinstance(value, celtypes.BoolType):
        return bool(value)
    if isinstance(value, dict):
        return {_plain(k, exact): _plain(v, exact) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v, exact) for v in value]
    if isinstance(value, decimal.Decimal):
        return ("decimal", str(value))
    if isinstance(value, datetime.datetime):
        return ("timestamp", value.astimezone(datetime.timezone.utc).isoformat())
    for plain in (bool, int, float, str, bytes):
        if isinstance(value, plain):
            return ((type(value) if exact else plain).__name__, plain(value))
    return value


def _evaluate(runner: Any, functions: Any, to_cel: Any, expr: str, record: Any) -> Any:
    try:
        env = celpy.Environment(runner_class=runner)
        result = env.program(env.compile(expr), functions=functions).evaluate({"message": to_cel(record)})
    except Exception as e:  # either client's failure: only that it failed is compared
        return ("error", type(e).__name__)
    if isinstance(result, celpy.CELEvalError):
        return ("error", "CELEvalError")
    return ("ok", _plain(result))


def _both(expr: str, record: Any) -> tuple[Any, Any]:
    ours = _evaluate(our_executor.InterpretedRunner, our_executor.EXTRA_FUNCS, our_executor.msg_to_cel, expr, record)
    theirs = _evaluate(
        their_executor.InterpretedRunner, their_executor.EXTRA_FUNCS, their_executor.msg_to_cel, expr, record
    )
    return ours, theirs


def _same(ours: Any, theirs: Any) -> None:
    if theirs[0] == "error":
        assert ours[0] == "error", f"confluent-kafka fails, ours gives {ours[1]!r}"
    else:
        assert ours == theirs


@pytest.mark.parametrize("expr", EXPRESSIONS)
def test_expression_as_on_confluent(expr: str) -> None:
    ours, theirs = _both(expr, _record())
    _same(ours, theirs)


def test_the_cases_compared_include_answers_and_failures() -> None:
    outcomes = [_both(expr, _record())[1][0] for expr in EXPRESSIONS]
    assert outcomes.count("ok") > 80 and outcomes.count("error") > 30


def test_a_protobuf_variant_message_is_read_as_on_confluent() -> None:
    for name in ("doc", "ts", "vnull"):
        record = _record()[name]
        ours = our_variant_pb2.Variant(**record)
        theirs = their_variant_pb2.Variant(**record)
        for expr in ("variants.toJson(variant(message))", "variants.type(message)", "variants.isNull(message)"):
            mine = _evaluate(
                our_executor.InterpretedRunner, our_executor.EXTRA_FUNCS, our_executor.msg_to_cel, expr, ours
            )
            judge = _evaluate(
                their_executor.InterpretedRunner, their_executor.EXTRA_FUNCS, their_executor.msg_to_cel, expr, theirs
            )
            _same(mine, judge)
            assert mine[0] == "ok"


# -- through the executors, as a rule runs


def _rule_both(kind: str, expr: str, record: Any) -> tuple[Any, Any]:
    ours = Rule("r", None, RuleKind(kind), RuleMode("WRITE"), "CEL", None, None, expr, None, None, False)
    theirs = CkRule("r", None, CkRuleKind(kind), CkRuleMode("WRITE"), "CEL", None, None, expr, None, None, False)
    ctx = RuleContext(None, None, None, "subject", RuleMode("WRITE"), ours, 0, [ours], None, None)
    ck_ctx = CkRuleContext(
        None, None, None, CkSchema("{}", "AVRO"), "subject", CkRuleMode("WRITE"), theirs, 0, [theirs], None, None
    )
    results = []
    for executor, context in ((our_executor.CelExecutor(), ctx), (their_executor.CelExecutor(), ck_ctx)):
        try:
            results.append(("ok", _plain(executor.transform(context, record), exact=False)))
        except Exception as e:
            results.append(("error", type(e).__name__))
    return results[0], results[1]


@pytest.mark.parametrize(
    ("kind", "expr"),
    [
        ("CONDITION", "variants.as(variants.path(variant(message.doc), '$.n'), 'int') == 42"),
        ("CONDITION", "variants.as(variants.path(variant(message.doc), '$.n'), 'int') == 41"),
        ("CONDITION", "variants.type(variant(message.doc)) == 'object' ; variants.isNull(variant(message.vnull))"),
        ("CONDITION", "'%d-%s'.format([message.i, 'x']) == '7-x'"),
        ("CONDITION", "timestamp(1700000000, 0) < timestamp(message.when)"),
        ("CONDITION", "variants.path(variant(message.doc), 'bad')"),
        ("TRANSFORM", "variants.toJson(variant(message.doc))"),
        ("TRANSFORM", "{'i': message.i, 'label': '%s:%d'.format([message.text, message.i])}"),
        ("TRANSFORM", "{'j': variants.as(variants.path(variant(message.doc), '$.f'), 'double')}"),
    ],
)
def test_rules_through_the_executors_as_on_confluent(kind: str, expr: str) -> None:
    ours, theirs = _rule_both(kind, expr, _record())
    _same(ours, theirs)


def test_a_transform_can_hand_back_a_variant() -> None:
    ours, theirs = _rule_both("TRANSFORM", "{'v': variants.path(variant(message.doc), '$.a')}", _record())
    _same(ours, theirs)
    assert ours[0] == "ok" and ours[1][("str", "v")][0] == "variant"


# -- the helpers' own functions


SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
path_text = st.text(alphabet="$.[]'\"\\-_0123456789abé \t", max_size=14)


@SETTINGS
@given(path_text)
def test_path_parsing_as_confluents(path: str) -> None:
    def parse(module: Any) -> Any:
        try:
            return ("ok", module.parse(path))
        except Exception as e:
            return ("error", type(e).__name__, str(e))

    assert parse(our_paths) == parse(their_paths)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(alphabet="ab_é\"' ", max_size=3), inner, max_size=4)
    ),
    max_leaves=20,
)


def _paths_into(value: Any, prefix: str = "$") -> list[str]:
    out = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            quoted = '"' + key.replace("\\", "\\\\").replace('"', '\\"') + '"'
            out += _paths_into(item, f"{prefix}[{quoted}]")
            if key.isidentifier():
                out += _paths_into(item, f"{prefix}.{key}")
        out.append(prefix + ".zz")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            out += _paths_into(item, f"{prefix}[{index}]")
        out.append(f"{prefix}[{len(value)}]")
    else:
        out += [prefix + ".a", prefix + "[0]"]
    return out


@SETTINGS
@given(json_values)
def test_walks_as_confluents(value: Any) -> None:
    text = json.dumps(value)
    ours, theirs = our_variants.parse_json(text), their_variants.parse_json(text)
    for path in _paths_into(value):
        mine, judge = our_paths.walk(ours, path), their_paths.walk(theirs, path)
        assert (mine is None) == (judge is None), path
        if mine is not None:
            assert mine.to_json() == judge.to_json() and mine.pos == judge.pos, path


@pytest.mark.parametrize(
    "moment",
    [
        datetime.datetime(2023, 11, 14, 22, 13, 20, tzinfo=datetime.timezone.utc),
        datetime.datetime(2023, 11, 14, 22, 13, 20, 123000, tzinfo=datetime.timezone.utc),
        datetime.datetime(2023, 11, 14, 22, 13, 20, 123456, tzinfo=datetime.timezone.utc),
        datetime.datetime(5, 1, 1, tzinfo=datetime.timezone.utc),
        datetime.datetime(2023, 1, 1, 1, tzinfo=datetime.timezone(datetime.timedelta(hours=5, minutes=30))),
        datetime.datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=datetime.timezone.utc),
    ],
)
def test_format_timestamp_as_confluents(moment: datetime.datetime) -> None:
    assert our_timestamps.format_timestamp(moment) == their_timestamps.format_timestamp(moment)


@pytest.mark.parametrize("text", ["", "plain", 'q"uote', "back\\slash", "\a\b\f\n\r\t\v", "é😀"])
def test_quote_as_confluents(text: str) -> None:
    assert our_format.quote(text) == their_format.quote(text)
    assert our_format.format_value(celtypes.StringType(text)) == their_format.format_value(celtypes.StringType(text))


def test_the_locale_is_kept() -> None:
    assert our_format.StringFormat("fr_FR").locale == their_format.StringFormat("fr_FR").locale == "fr_FR"
    from confluent_kafka.schema_registry.rules.cel import extra_func as their_extra

    from kafkawire.schema_registry.rules.cel import extra_func as our_extra

    ours, theirs = set(our_extra.make_extra_funcs("en_US")), set(their_extra.make_extra_funcs("en_US"))
    assert ours == theirs


# -- a protobuf record: constraints' conversions and the result writer


def _holder_class() -> Any:
    """A message type with a confluent.type.Variant, a confluent.type.Decimal and a Timestamp field."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, timestamp_pb2

    from kafkawire.schema_registry.confluent.type import decimal_pb2 as our_decimal_pb2

    pool = descriptor_pool.DescriptorPool()
    for file in (our_variant_pb2.DESCRIPTOR, our_decimal_pb2.DESCRIPTOR, timestamp_pb2.DESCRIPTOR):
        pool.Add(descriptor_pb2.FileDescriptorProto.FromString(file.serialized_pb))
    field = descriptor_pb2.FieldDescriptorProto
    fdp = descriptor_pb2.FileDescriptorProto(
        name="holder.proto",
        package="t",
        syntax="proto3",
        dependency=[our_variant_pb2.DESCRIPTOR.name, our_decimal_pb2.DESCRIPTOR.name, timestamp_pb2.DESCRIPTOR.name],
    )
    holder = fdp.message_type.add(name="Holder")
    for number, (name, kind, type_name) in enumerate(
        [
            ("v", field.TYPE_MESSAGE, ".confluent.type.Variant"),
            ("d", field.TYPE_MESSAGE, ".confluent.type.Decimal"),
            ("ts", field.TYPE_MESSAGE, ".google.protobuf.Timestamp"),
            ("n", field.TYPE_INT64, None),
        ],
        start=1,
    ):
        holder.field.add(name=name, number=number, type=kind, label=field.LABEL_OPTIONAL, type_name=type_name)
    pool.Add(fdp)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("t.Holder"))


def _holder() -> Any:
    message = _holder_class()(n=5)
    message.v.metadata, message.v.value = _DOC_VARIANT.metadata, _DOC_VARIANT.value
    message.d.value, message.d.precision, message.d.scale = b"\x30\x39", 5, 2
    message.ts.seconds, message.ts.nanos = 1_700_000_000, 123_456_789
    return message


def _protobuf_rule_both(expr: str, record: Any) -> tuple[Any, Any]:
    ours = Rule("r", None, RuleKind("TRANSFORM"), RuleMode("WRITE"), "CEL", None, None, expr, None, None, False)
    theirs = CkRule("r", None, CkRuleKind("TRANSFORM"), CkRuleMode("WRITE"), "CEL", None, None, expr, None, None, False)
    ctx = RuleContext(None, None, None, "subject", RuleMode("WRITE"), ours, 0, [ours], None, None)
    ck_ctx = CkRuleContext(
        None, None, None, CkSchema("{}", "PROTOBUF"), "subject", CkRuleMode("WRITE"), theirs, 0, [theirs], None, None
    )
    results = []
    for executor, context in ((our_executor.CelExecutor(), ctx), (their_executor.CelExecutor(), ck_ctx)):
        try:
            results.append(("ok", executor.transform(context, record).SerializeToString(deterministic=True)))
        except Exception as e:
            results.append(("error", type(e).__name__))
    return results[0], results[1]


@pytest.mark.parametrize(
    "expr",
    [
        "message",
        "{'n': message.n + 1}",
        "{'v': message.v, 'd': message.d, 'ts': message.ts, 'n': message.n}",
        "{'v': variants.path(variant(message.v), '$.a.b')}",
        "{'v': variants.parseJson('[1, {\"x\": 2.5}]')}",
        "{'ts': timestamp(1700000000123, 3)}",
        "{'ts': timestamp(message.ts)}",
        "{'d': variants.as(variants.path(variant(message.v), '$.dec'), 'decimal')}",
        "{'v': 1}",
        "{'nope': 1, 'n': 2}",
        "{'n': null}",
        "1",
    ],
)
def test_protobuf_transforms_write_back_as_on_confluent(expr: str) -> None:
    ours, theirs = _protobuf_rule_both(expr, _holder())
    _same(ours, theirs)


def test_constraints_conversions_as_confluents() -> None:
    from confluent_kafka.schema_registry.rules.cel import constraints as theirs
    from google.protobuf import descriptor_pb2, duration_pb2, timestamp_pb2, wrappers_pb2

    from kafkawire.schema_registry.rules.cel import constraints as ours

    assert ours.PROTOBUF_MAJOR_VERSION == theirs.PROTOBUF_MAJOR_VERSION
    stamp = timestamp_pb2.Timestamp(seconds=-5, nanos=999_999_000)
    assert ours.make_timestamp(stamp) == theirs.make_timestamp(stamp)
    span = duration_pb2.Duration(seconds=3, nanos=500_000_000)
    assert ours.make_duration(span) == theirs.make_duration(span)
    for wrapper in (
        wrappers_pb2.Int64Value(value=-3),
        wrappers_pb2.UInt32Value(value=7),
        wrappers_pb2.StringValue(value="s"),
        wrappers_pb2.BytesValue(value=b"\x01"),
        wrappers_pb2.DoubleValue(value=0.5),
        wrappers_pb2.BoolValue(value=True),
    ):
        mine, judge = ours.unwrap(wrapper), theirs.unwrap(wrapper)
        assert (type(mine).__name__, mine) == (type(judge).__name__, judge)
    for key in (celtypes.StringType('a"b'), celtypes.IntType(3), celtypes.UintType(4), celtypes.BoolType(True)):
        assert ours.make_key_path("f", key) == theirs.make_key_path("f", key)
    fields = descriptor_pb2.FileDescriptorProto.DESCRIPTOR.fields_by_name
    kinds = descriptor_pb2.FieldDescriptorProto
    for name, expected, wrapper in [
        ("name", kinds.TYPE_STRING, None),
        ("name", kinds.TYPE_INT32, None),
        ("options", kinds.TYPE_STRING, "google.protobuf.FileOptions"),
        ("options", kinds.TYPE_STRING, "other"),
    ]:
        outcomes = []
        for module in (ours, theirs):
            try:
                outcomes.append(module.check_field_type(fields[name], expected, wrapper))
            except Exception as e:
                outcomes.append((type(e).__name__, str(e)))
        assert outcomes[0] == outcomes[1]
    assert ours.in_has() is theirs.in_has() is False


def test_a_message_map_reads_as_on_confluent() -> None:
    message = _holder()
    for expr in ("message.n", "has(message.v)", "has(message.d)", "message.ts", "variants.type(message.v)"):
        ours, theirs = _both(expr, message)
        _same(ours, theirs)
        assert ours[0] == "ok", expr
