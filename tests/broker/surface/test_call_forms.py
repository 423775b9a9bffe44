"""Every call form confluent-kafka accepts (issue 37), generated from its type stubs.

confluent-kafka 2.16 ships ``cimpl.pyi``: the signatures of its C classes (Producer, Consumer,
ShareConsumer, KafkaError, Message, TopicPartition, Uuid, NewTopic, NewPartitions) and module
functions. For each signature (each overload of it) the cases are: the required arguments by
position, then by keyword, every argument by position, then by keyword, one positional argument
too many and one unknown keyword; a constructor that takes a configuration also gets it as a dict,
as keywords, as both and as neither. Each case runs on both clients against the same Tansu broker
(the values come from one table by parameter name, made of each client's own classes) and the
outcome classes are compared: accepted, or the exception class and, for a KafkaException, its
error code. Methods run on a fresh object of each client: a producer, or a consumer with a group
id that has one record in hand (no group join).
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import confluent_kafka
import confluent_kafka.cimpl
import pytest

import kafkawire
import kafkawire.cimpl
from kafkawire.local_broker import TansuBroker
from tests.harness.topics import create_topic

pytestmark = pytest.mark.broker

STUBS = Path(confluent_kafka.__file__).with_name("cimpl.pyi")
CLIENTS = {"confluent-kafka": confluent_kafka.cimpl, "kafkawire": kafkawire.cimpl}
# Receivers whose methods are called; the other classes get their constructor's forms only.
RECEIVERS = ("Producer", "Consumer")
CONSTRUCTED = (
    "Producer",
    "Consumer",
    "ShareConsumer",
    "KafkaError",
    "Message",
    "TopicPartition",
    "Uuid",
    "NewTopic",
    "NewPartitions",
)
# What the generated forms leave alone: closing the receiver (each case has its own anyway), the
# context protocol, and the calls only a transactional producer or a share group makes sense of
# (their refusals are the transactions' and share consumer's own tests).
SKIPPED = {"close", "__enter__", "__exit__", "__len__", "__bool__"}
NO_BROKER = "127.0.0.1:9"  # a constructor's forms never connect


@dataclass(frozen=True)
class Param:
    name: str
    kind: str  # "posonly", "any", "kwonly"
    required: bool


@dataclass(frozen=True)
class Signature:
    owner: str  # class name, or "" for a module function
    name: str
    params: tuple[Param, ...]
    varargs: bool
    varkw: bool


def _signature(owner: str, fn: ast.FunctionDef) -> Signature:
    a = fn.args
    positional = [*a.posonlyargs, *a.args]
    if owner:
        positional = positional[1:]  # self
    first_default = len(positional) - len(a.defaults)
    params = [
        Param(p.arg, "posonly" if p in a.posonlyargs else "any", i < first_default) for i, p in enumerate(positional)
    ]
    params += [Param(p.arg, "kwonly", d is None) for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=True)]
    return Signature(owner, fn.name, tuple(params), a.vararg is not None, a.kwarg is not None)


def stub_signatures() -> list[Signature]:
    tree = ast.parse(STUBS.read_text())
    found: list[Signature] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            found.append(_signature("", node))
        elif isinstance(node, ast.ClassDef) and node.name in CONSTRUCTED:
            for item in node.body:
                if not isinstance(item, ast.FunctionDef) or item.name in SKIPPED:
                    continue
                if item.name == "__init__" or (node.name in RECEIVERS and not item.name.startswith("_")):
                    found.append(_signature(node.name, item))
    return found


@dataclass
class Case:
    sig: Signature
    form: str
    args: tuple[str, ...]  # parameter names given by position
    kwargs: tuple[str, ...]  # parameter names given by keyword
    extra_arg: bool = False
    bogus_kwarg: bool = False

    @property
    def id(self) -> str:
        return f"{self.sig.owner or 'module'}.{self.sig.name}[{','.join(self.sig_key())}]-{self.form}"

    def sig_key(self) -> list[str]:
        return [p.name for p in self.sig.params]


def cases_of(sig: Signature) -> list[Case]:
    params = sig.params
    required = [p for p in params if p.required]
    by_position = [p.name for p in params if p.kind != "kwonly"]
    out = [
        Case(
            sig,
            "required-positional",
            tuple(p.name for p in required if p.kind != "kwonly"),
            tuple(p.name for p in required if p.kind == "kwonly"),
        ),
        Case(sig, "all-positional", tuple(by_position), tuple(p.name for p in params if p.kind == "kwonly")),
    ]
    if all(p.kind != "posonly" for p in required):
        out.append(Case(sig, "required-keyword", (), tuple(p.name for p in required)))
    posonly = tuple(p.name for p in params if p.kind == "posonly")
    out.append(Case(sig, "all-keyword", posonly, tuple(p.name for p in params if p.kind != "posonly")))
    if not sig.varargs:
        out.append(Case(sig, "extra-positional", tuple(by_position), (), extra_arg=True))
    if not sig.varkw:
        out.append(Case(sig, "unknown-keyword", out[0].args, out[0].kwargs, bogus_kwarg=True))
    return out


# Forms that wait for ever on both clients: an idle producer's poll() with its default timeout (-1)
# waits for an event that never comes.
BLOCKING = {("Producer", "poll", "required-positional"), ("Producer", "poll", "required-keyword")}


def all_cases() -> list[Case]:
    seen: set[str] = set()
    cases = []
    for sig in stub_signatures():
        for case in cases_of(sig):
            if (sig.owner, sig.name, case.form) in BLOCKING:
                continue
            if case.id not in seen:  # overloads that give the same call
                seen.add(case.id)
                cases.append(case)
    return cases


# --- the values, by parameter name ------------------------------------------------------------------


@dataclass
class World:
    """One client's side of a case: its module, the broker, a topic with records, what was made."""

    module: Any
    bootstrap: str
    topic: str
    made: list[Any] = field(default_factory=list)

    def tp(self, offset: int = -1001) -> Any:
        return self.module.TopicPartition(self.topic, 0, offset)

    def producer(self) -> Any:
        p = self.module.Producer({"bootstrap.servers": self.bootstrap})
        self.made.append(p)
        return p

    def consumer(self) -> Any:
        c = self.module.Consumer(
            {"bootstrap.servers": self.bootstrap, "group.id": f"forms-{self.topic}", "enable.auto.commit": False}
        )
        self.made.append(c)
        return c

    def consumer_with_record(self) -> tuple[Any, Any]:
        c = self.consumer()
        c.assign([self.tp(0)])
        for _ in range(50):
            m = c.poll(0.2)
            if m is not None and m.error() is None:
                return c, m
        raise AssertionError("no record came")

    def close(self) -> None:
        for thing in self.made:
            try:
                thing.close()
            except Exception:
                pass


def _noop(*_args: Any) -> None:
    return None


# Values for a receiver's method, by name; each takes the world and the method's name.
VALUES: dict[str, Callable[[World, str], Any]] = {
    "topic": lambda w, m: w.topic,
    "value": lambda w, m: b"v",
    "key": lambda w, m: b"k",
    "partition": lambda w, m: w.tp(0) if m in ("seek", "get_watermark_offsets") else 0,
    "callback": lambda w, m: _noop,
    "on_delivery": lambda w, m: _noop,
    "timestamp": lambda w, m: 0,
    "headers": lambda w, m: [("h", b"1")],
    "messages": lambda w, m: [{"value": b"v"}],
    "timeout": lambda w, m: 0 if m in ("poll", "flush", "consume") else 10,
    "in_queue": lambda w, m: True,
    "in_flight": lambda w, m: True,
    "blocking": lambda w, m: True,
    "positions": lambda w, m: [w.tp(1)],
    "group_metadata": lambda w, m: w.consumer().consumer_group_metadata(),
    "username": lambda w, m: "user",
    "password": lambda w, m: "secret",
    "topics": lambda w, m: [w.topic],
    "on_assign": lambda w, m: _noop,
    "on_revoke": lambda w, m: _noop,
    "on_lost": lambda w, m: _noop,
    "num_messages": lambda w, m: 1,
    "partitions": lambda w, m: [w.tp(1)],
    "cached": lambda w, m: False,
    "offsets": lambda w, m: [w.tp(1)],
    "asynchronous": lambda w, m: False,
}
# Values for constructors and module functions, by (owner, name).
INIT_VALUES: dict[tuple[str, str], Callable[[World], Any]] = {
    ("KafkaError", "code"): lambda w: w.module.KafkaError._TIMED_OUT,
    ("KafkaError", "reason"): lambda w: "reason",
    ("KafkaError", "fatal"): lambda w: False,
    ("KafkaError", "retriable"): lambda w: True,
    ("KafkaError", "txn_requires_abort"): lambda w: False,
    ("Message", "topic"): lambda w: w.topic,
    ("Message", "partition"): lambda w: 0,
    ("Message", "offset"): lambda w: 5,
    ("Message", "key"): lambda w: b"k",
    ("Message", "value"): lambda w: b"v",
    ("Message", "headers"): lambda w: [("h", b"1")],
    ("Message", "error"): lambda w: None,
    ("Message", "timestamp"): lambda w: (1, 1_700_000_000_000),
    ("Message", "latency"): lambda w: 0.5,
    ("Message", "leader_epoch"): lambda w: 3,
    ("Message", "delivery_count"): lambda w: 1,
    ("TopicPartition", "topic"): lambda w: w.topic,
    ("TopicPartition", "partition"): lambda w: 0,
    ("TopicPartition", "offset"): lambda w: 5,
    ("TopicPartition", "metadata"): lambda w: "meta",
    ("TopicPartition", "leader_epoch"): lambda w: 2,
    ("Uuid", "most_significant_bits"): lambda w: 1,
    ("Uuid", "least_significant_bits"): lambda w: 2,
    ("NewTopic", "topic"): lambda w: w.topic,
    ("NewTopic", "num_partitions"): lambda w: 3,
    ("NewTopic", "replication_factor"): lambda w: 1,
    ("NewTopic", "replica_assignment"): lambda w: None,
    ("NewTopic", "config"): lambda w: {"cleanup.policy": "compact"},
    ("NewPartitions", "topic"): lambda w: w.topic,
    ("NewPartitions", "new_total_count"): lambda w: 4,
    ("NewPartitions", "replica_assignment"): lambda w: None,
    ("", "key"): lambda w: b"key",
    ("", "partition_count"): lambda w: 6,
}
CONFIGS = {
    "Producer": lambda w: {"bootstrap.servers": NO_BROKER},
    "Consumer": lambda w: {"bootstrap.servers": NO_BROKER, "group.id": "forms"},
    "ShareConsumer": lambda w: {"bootstrap.servers": NO_BROKER, "group.id": "forms"},
}


def _call(world: World, case: Case) -> Any:
    sig = case.sig
    if sig.name == "__init__" and sig.owner in CONFIGS:
        return _construct_with_config(world, case)
    if sig.name == "__init__":
        target = getattr(world.module, sig.owner)

        def value(name: str) -> Any:
            return INIT_VALUES[sig.owner, name](world)
    elif not sig.owner:
        target = getattr(world.module, sig.name)

        def value(name: str) -> Any:
            return INIT_VALUES["", name](world)
    else:
        receiver: Any
        table = VALUES
        if sig.owner == "Producer":
            receiver = world.producer()
        else:
            receiver, record = world.consumer_with_record()
            table = {**VALUES, "message": lambda w, m: record}
        target = getattr(receiver, sig.name)

        def value(name: str) -> Any:
            return table[name](world, sig.name)

    args = [value(n) for n in case.args]
    if case.extra_arg:
        args.append(None)
    kwargs = {n: value(n) for n in case.kwargs}
    if case.bogus_kwarg:
        kwargs["no_such_argument"] = 1
    result = target(*args, **kwargs)
    if hasattr(result, "close"):
        world.made.append(result)
    return result


def _construct_with_config(world: World, case: Case) -> Any:
    """A client's constructor: the stub's overload decides how the configuration is given."""
    cls = getattr(world.module, case.sig.owner)
    conf = CONFIGS[case.sig.owner](world)
    params = {p.name for p in case.sig.params}
    if case.sig.varkw and "config" not in params:  # __init__(**config)
        made = cls(**conf) if not case.bogus_kwarg else cls(**conf, no_such_argument=1)
    elif case.sig.varkw:  # __init__(config, /, **kwargs): the dict, one key again by keyword
        first, *rest = conf
        made = cls({first: conf[first]}, **{k: conf[k] for k in rest})
        if case.extra_arg:
            made.close()
            made = cls(conf, {"client.id": "x"})
    else:  # __init__(config)
        made = cls(*([conf] * (2 if case.extra_arg else 1)), **({"no_such_argument": 1} if case.bogus_kwarg else {}))
    world.made.append(made)
    return made


def outcome(world: World, case: Case) -> str:
    try:
        _call(world, case)
    except Exception as exc:
        error = exc.args[0] if exc.args else None
        code = error.code() if hasattr(error, "code") and callable(error.code) else None
        return f"{type(exc).__name__}" + (f"({code})" if code is not None else "")
    finally:
        world.close()
    return "accepted"


# Differences kept, each with why (the README's "differs on purpose" names them).
KEPT: dict[str, str] = {
    "Producer.produce[topic,value,key,partition,callback,on_delivery,timestamp,headers]-all-positional": (
        "the seeds document produce(topic[, value][, key][, partition][, on_delivery][, timestamp][, headers]):"
        " kafkawire's sixth positional argument is the timestamp, confluent-kafka's C binding takes on_delivery"
        " there (its stub's order); callback is keyword-only"
    ),
}


@pytest.fixture(scope="module")
def topic(tansu: TansuBroker) -> Iterator[str]:
    name = f"call-forms-{next(_names)}"
    create_topic(tansu.bootstrap, name, 1)
    p = confluent_kafka.Producer({"bootstrap.servers": tansu.bootstrap})
    for i in range(20):
        p.produce(name, b"r%d" % i, partition=0)
    assert p.flush(30) == 0
    yield name


_names = itertools.count()
CASES = all_cases()


def test_the_stubs_give_cases_for_every_public_class() -> None:
    owners = {c.sig.owner for c in CASES}
    assert set(CONSTRUCTED) <= owners
    assert len(CASES) > 200


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_call_form_outcome_is_confluent_kafkas(tansu: TansuBroker, topic: str, case: Case) -> None:
    theirs = outcome(World(CLIENTS["confluent-kafka"], tansu.bootstrap, topic), case)
    ours = outcome(World(CLIENTS["kafkawire"], tansu.bootstrap, topic), case)
    if case.id in KEPT:
        assert ours != theirs, f"{case.id} now behaves as confluent-kafka: drop it from KEPT"
        return
    assert ours == theirs


# --- the Python-level clients: their configuration forms ------------------------------------------

# (confluent-kafka's class, kafkawire's, the configuration it needs); their signatures are
# confluent-kafka's Python code's (no stubs): ``(conf)``, ``(conf, **kwargs)`` or ``(conf, ...)``.
PY_CLIENTS = {
    "AdminClient": ("confluent_kafka.admin", "kafkawire.admin", {}),
    "SerializingProducer": ("confluent_kafka", "kafkawire", {}),
    "DeserializingConsumer": ("confluent_kafka", "kafkawire", {"group.id": "forms"}),
    "AIOProducer": ("confluent_kafka.aio", "kafkawire.aio", {}),
    "AIOConsumer": ("confluent_kafka.aio", "kafkawire.aio", {"group.id": "forms"}),
}


def _rest(conf: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in conf.items() if k != "bootstrap.servers"}


CONF_FORMS: dict[str, Callable[[Any, dict[str, Any]], Any]] = {
    "dict": lambda cls, conf: cls(conf),
    "keywords": lambda cls, conf: cls(**conf),
    "dict-and-keywords": lambda cls, conf: cls({"bootstrap.servers": NO_BROKER}, **_rest(conf)),
    "nothing": lambda cls, conf: cls(),
    "not-a-dict": lambda cls, conf: cls("bootstrap.servers=" + NO_BROKER),
    "unknown-key": lambda cls, conf: cls({**conf, "no.such.property": 1}),
}


def _py_outcome(module_name: str, name: str, form: str, conf: dict[str, Any]) -> str:
    import asyncio
    import importlib

    cls = getattr(importlib.import_module(module_name), name)

    async def make() -> str:  # the asyncio faces are made on a running loop, as their users do
        world = World(None, NO_BROKER, "")
        try:
            made = CONF_FORMS[form](cls, conf)
        except Exception as exc:
            error = exc.args[0] if exc.args else None
            code = error.code() if hasattr(error, "code") and callable(error.code) else None
            return f"{type(exc).__name__}" + (f"({code})" if code is not None else "")
        closer = getattr(made, "close", None)
        if closer is not None:
            result = closer()
            if asyncio.iscoroutine(result):
                await result
        world.close()
        return "accepted"

    return asyncio.run(make())


# Differences kept, each with why (README, "differs on purpose"): kafkawire accepts more, or says
# what is wrong where confluent-kafka fails inside its own code.
PY_KEPT = {
    ("AdminClient", "keywords"): "the configuration as keywords, as confluent-kafka's Producer and Consumer take it",
    ("AIOConsumer", "dict-and-keywords"): "more configuration as keywords, as the Consumer takes it",
    ("SerializingProducer", "not-a-dict"): "TypeError naming the dict expected; confluent-kafka's AttributeError",
    ("DeserializingConsumer", "not-a-dict"): "TypeError naming the dict expected; confluent-kafka's AttributeError",
}


@pytest.mark.parametrize("form", CONF_FORMS)
@pytest.mark.parametrize("name", PY_CLIENTS)
def test_python_client_configuration_forms_are_confluent_kafkas(name: str, form: str) -> None:
    theirs_module, ours_module, needed = PY_CLIENTS[name]
    conf = {"bootstrap.servers": NO_BROKER, **needed}
    ours, theirs = _py_outcome(ours_module, name, form, conf), _py_outcome(theirs_module, name, form, conf)
    if (name, form) in PY_KEPT:
        assert ours != theirs, f"{name} {form} now behaves as confluent-kafka: drop it from PY_KEPT"
        assert ours == "accepted" or ours.startswith("TypeError")
        return
    assert ours == theirs
