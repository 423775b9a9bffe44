"""The serializing clients' serde plumbing (confluent-kafka's ``_serde_builder``: builders, owned
serdes, cluster id resolvers) and the blocking clients built on it, each against confluent-kafka's.
The clients point at a closed loopback port: nothing here waits on a broker."""

from __future__ import annotations

import asyncio
import functools
import importlib
import inspect
import socket
import threading
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import confluent_kafka
import confluent_kafka._serde_builder as ck_serde
import confluent_kafka.serialization as ck_serialization
import pytest

import kafkawire
import kafkawire.serialization as kw_serialization


@pytest.fixture
def bootstrap() -> Iterator[str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        yield f"127.0.0.1:{s.getsockname()[1]}"


def _outcome(call: Any) -> Any:
    try:
        return ("ok", call())
    except Exception as e:
        return (type(e).__name__, str(e))


class _Serde:
    def __init__(self, log: list[str], tag: str, fail_close: bool = False) -> None:
        self.log, self.tag, self.fail_close = log, tag, fail_close

    def __call__(self, obj: Any, ctx: Any) -> Any:
        return obj

    def set_cluster_id_resolver(self, resolver: Any) -> None:
        self.log.append(f"resolver {self.tag}")

    def close(self) -> None:
        self.log.append(f"close {self.tag}")
        if self.fail_close:
            raise RuntimeError(f"close {self.tag} failed")


class _Builder:
    def __init__(self, log: list[str], tag: str, result: Any = None, take: tuple[str, ...] = ()) -> None:
        self.log, self.tag, self.result, self.take = log, tag, result, take

    def build(self, conf: dict[str, Any], is_key: bool) -> Any:
        self.log.append(f"build {self.tag} key={is_key} conf={sorted(conf)}")
        if self.result is not None:
            return self.result
        return _Serde(self.log, self.tag), {k: v for k, v in conf.items() if k not in self.take}


def _plumbing(serde: ModuleType) -> list[Any]:
    log: list[str] = []
    out: list[Any] = []
    conf = {"a": 1, "b": 2, "key.serializer": "K", "value.serializer.builder": "VB", "c": 3}
    out.append(_outcome(lambda: serde.pop_serde_props(conf, "key.serializer", "value.serializer")))
    out.append(_outcome(lambda: serde.pop_serde_props({"x.s": 1, "x.s.builder": 2}, "x.s", "y.s")))
    out.append(sorted(conf))  # not modified
    specs = [
        serde.SerdeSpec("key.serializer", None, _Builder(log, "k", take=("a",)), True),
        serde.SerdeSpec("value.serializer", None, _Builder(log, "v", take=("b",)), False),
    ]
    serdes, owned, rest = serde.build_serdes(specs, {"a": 1, "b": 2, "c": 3})
    out += [[s.tag for s in serdes], [s.tag for s in owned], rest]
    out.append(serde.build_serdes([serde.SerdeSpec("p", "ready", None, True)], {"z": 1})[1:])
    for bad in ((1, 2, 3), "xy", (object(), ["not a dict"]), 0):
        failing = [
            serde.SerdeSpec("key.serializer", None, _Builder(log, "k2"), True),
            serde.SerdeSpec("value.serializer", None, _Builder(log, "bad", result=bad), False),
        ]
        out.append(_outcome(lambda f=failing: serde.build_serdes(f, {"q": 1})))
    out.append(serde.intersect_leftovers({"a": 1}, []))
    out.append(serde.intersect_leftovers({}, [{"a": 1, "b": 2}, {"b": 3, "c": 4, "a": 5}]))
    out.append(_outcome(lambda: serde.close_serdes([_Serde(log, "x", True), None, 3, _Serde(log, "y", True)])))
    resolver_log: list[str] = []
    serde.propagate_cluster_id_resolver(lambda: "id", [None, len, _Serde(resolver_log, "s")])
    out.append(resolver_log)
    out.append(serde.CLUSTER_ID_TIMEOUT)
    out.append(log)
    return out


def test_serde_plumbing_as_confluent_kafkas() -> None:
    assert _plumbing(kw_serialization) == _plumbing(ck_serde)


def test_async_serde_plumbing_as_confluent_kafkas() -> None:
    def run(serde: ModuleType) -> list[Any]:
        log: list[str] = []

        class AsyncBuilder(_Builder):
            async def build(self, conf: dict[str, Any], is_key: bool) -> Any:  # type: ignore[override]
                await asyncio.sleep(0)
                return super().build(conf, is_key)

        class AsyncClosing(_Serde):
            async def aclose(self) -> None:
                self.log.append(f"aclose {self.tag}")

        async def main() -> list[Any]:
            out: list[Any] = [await serde.maybe_await(3), await serde.maybe_await(asyncio.sleep(0, "x"))]
            specs = [serde.SerdeSpec("k", None, AsyncBuilder(log, "k", take=("a",)), True)]
            specs.append(serde.SerdeSpec("v", None, _Builder(log, "v"), False))
            serdes, _owned, rest = await serde.async_build_serdes(specs, {"a": 1, "b": 2})
            out += [[s.tag for s in serdes], rest]
            await serde.async_close_serdes([AsyncClosing(log, "a"), _Serde(log, "b"), None])
            calls = []

            async def cluster_id(timeout: float) -> str:
                calls.append(timeout)
                await asyncio.sleep(0.01)
                return "the-id"

            resolver = serde.AsyncSharedClusterIdResolver(cluster_id, timeout=5)
            out.append(await asyncio.gather(resolver(), resolver(), resolver()))
            out.append(calls)
            out.append(log)
            return out

        return asyncio.run(main())

    assert run(kw_serialization) == run(ck_serde)


def test_shared_cluster_id_resolver_makes_one_call_for_concurrent_callers() -> None:
    def run(serde: ModuleType) -> tuple[list[Any], list[float]]:
        started, release = threading.Event(), threading.Event()
        calls: list[float] = []

        def cluster_id(timeout: float) -> str:
            calls.append(timeout)
            started.set()
            release.wait(10)
            return "the-id"

        resolver = serde.SharedClusterIdResolver(cluster_id, timeout=7)
        results: list[Any] = []
        threads = [threading.Thread(target=lambda: results.append(resolver())) for _ in range(4)]
        threads[0].start()
        started.wait(10)
        for t in threads[1:]:
            t.start()
        release.set()
        for t in threads:
            t.join(10)
        results.append(resolver())  # nothing kept: a new call
        return results, calls

    assert run(kw_serialization) == run(ck_serde) == (["the-id"] * 5, [7, 7])


def _clients(module: ModuleType, serialization: ModuleType, bootstrap: str) -> list[Any]:
    log: list[str] = []
    out: list[Any] = []
    conf = {"bootstrap.servers": bootstrap, "message.timeout.ms": 1000}
    out.append(_outcome(lambda: module.SerializingProducer({**conf, "key.serializer": 1, "key.serializer.builder": 2})))
    producer = module.SerializingProducer(
        {
            **conf,
            "key.serializer": _Serde(log, "given-key"),
            "value.serializer.builder": _Builder(log, "built-value", take=("builder.only",)),
            "builder.only": "x",
        }
    )
    out.append(list(log))
    producer.produce("t", key="k", value="v")
    out.append(producer.close() if isinstance(producer, kafkawire.Producer) else (producer.close(), True)[1])
    out.append(list(log))
    producer.close()
    try:
        producer.produce("t", value="v")
    except RuntimeError as e:  # kafkawire's ProducerClosedError is also a KafkaException
        out.append("Producer has been closed" in str(e))
    both = {**conf, "value.serializer": _Serde(log, "v"), "value.serializer.builder": _Builder(log, "x")}
    out.append(_outcome(lambda: module.SerializingProducer(both)))
    log.clear()
    # A configuration the client refuses: what was built is closed, the client's error raised.
    out.append(
        type(
            _outcome(
                lambda: module.SerializingProducer(
                    {**conf, "linger.ms": -5, "value.serializer.builder": _Builder(log, "refused")}
                )
            )[0]
        )
    )
    out.append(list(log))
    log.clear()
    consumer = module.DeserializingConsumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "g",
            "key.deserializer.builder": _Builder(log, "built-key", take=("builder.only",)),
            "value.deserializer": _Serde(log, "given-value"),
            "builder.only": 1,
        }
    )
    consumer.close()
    consumer.close()
    out.append(list(log))
    out.append(_outcome(lambda: serialization.SerializerBuilder().build({}, True)))
    out.append(_outcome(lambda: serialization.DeserializerBuilder().build({}, False)))
    return out


def test_serializing_clients_with_builders_as_confluent_kafkas(bootstrap: str) -> None:
    ours = _clients(kafkawire, kw_serialization, bootstrap)
    theirs = _clients(confluent_kafka, ck_serialization, bootstrap)
    assert ours == theirs
    assert "close built-value" in ours[3] and "close given-key" not in ours[3]


AVRO_SCHEMA = (
    '{"type": "record", "name": "Order", "fields": [{"name": "id", "type": "int"}, {"name": "item", "type": "string"}]}'
)
JSON_SCHEMA = (
    '{"type": "object", "title": "Order", "properties": {"id": {"type": "integer"}, "item": {"type": "string"}}}'
)
FORMATS = ("avro", "json_schema", "protobuf")


@functools.cache
def _note() -> Any:
    """A message type of this test's own (a file no registry holds yet)."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    pool = descriptor_pool.DescriptorPool()
    file = descriptor_pb2.FileDescriptorProto(name="kwbuilders/note.proto", package="kwbuilders", syntax="proto3")
    field = descriptor_pb2.FieldDescriptorProto
    file.message_type.add(name="Note").field.add(
        name="text", number=1, type=field.TYPE_STRING, label=field.LABEL_OPTIONAL
    )
    pool.Add(file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("kwbuilders.Note"))


def _format_args(fmt: str, role: str) -> dict[str, Any]:
    """The builder arguments a format needs besides the registry's (protobuf: a message type)."""
    if fmt == "protobuf":
        return {"message_type": _note()}
    if fmt == "avro":
        return {"schema": AVRO_SCHEMA} if role == "ser" else {}
    return {"schema": JSON_SCHEMA}


def _record(fmt: str) -> Any:
    if fmt == "protobuf":
        return _note()(text="héllo")
    return {"id": 7, "item": "book"}


def _registry_builders(lib: str, fmt: str, url: str) -> list[Any]:
    """Each step of a format's builders on one library: what a builder is made of, what build
    gives, the bytes of a record and the record read back, and the refusals."""
    module = importlib.import_module(f"{lib}.schema_registry.{fmt}")
    serialization = importlib.import_module(f"{lib}.serialization")
    ser_name, de_name = {
        "avro": ("AvroSerializerBuilder", "AvroDeserializerBuilder"),
        "json_schema": ("JSONSerializerBuilder", "JSONDeserializerBuilder"),
        "protobuf": ("ProtobufSerializerBuilder", "ProtobufDeserializerBuilder"),
    }[fmt]
    out: list[Any] = []
    for name in (ser_name, de_name):
        cls = getattr(module, name)
        out.append([name, list(inspect.signature(cls).parameters), sorted(n for n in dir(cls) if n.startswith("set_"))])
    ctx = serialization.SerializationContext("orders", serialization.MessageField.VALUE)
    conf = {"bootstrap.servers": "127.0.0.1:1", "linger.ms": 5}
    seen: list[str] = []
    builder = getattr(module, ser_name)(schema_registry_config={"url": url}, **_format_args(fmt, "ser"))
    chained = builder.set_serializer_config({"auto.register.schemas": True}).set_serializer_init(
        lambda serde: seen.append(type(serde).__name__)
    )
    out.append(chained is builder)
    serializer, left = builder.build(conf, False)
    base = importlib.import_module(f"{lib}.schema_registry.serde").BaseSerde
    out += [left == conf and left is not conf, seen, isinstance(serializer, serialization.Serializer)]
    out.append(isinstance(serializer, base))
    payload = serializer(_record(fmt), ctx)
    out.append(payload)
    serializer.close()
    serializer.close()
    # A given client is the application's: closing a serde leaves it usable. (confluent-kafka's
    # mock registry is one per client, so the reader shares the second writer's client.)
    client = importlib.import_module(f"{lib}.schema_registry").SchemaRegistryClient.new_client({"url": url})
    writer, _ = getattr(module, ser_name)(schema_registry_client=client, **_format_args(fmt, "ser")).build({}, False)
    out.append(writer(_record(fmt), ctx) == payload)
    writer.close()
    de_builder = getattr(module, de_name)().set_schema_registry_client(client)
    for key, value in _format_args(fmt, "de").items():
        getattr(de_builder, f"set_{key}")(value)
    deserializer, _ = de_builder.build({}, False)
    out.append(str(deserializer(payload, ctx)))
    deserializer.close()
    out.append(sorted(client.get_subjects()))
    both = getattr(module, ser_name)(schema_registry_config={"url": url}, schema_registry_client=client)
    out.append(_outcome(lambda: both.build({}, True)))

    def failing_init(serde: Any) -> None:
        raise RuntimeError("init refused")

    out.append(
        _outcome(
            lambda: getattr(module, ser_name)(serializer_init=failing_init, **_format_args(fmt, "ser")).build({}, True)
        )
    )
    return out


@pytest.mark.parametrize("fmt", FORMATS)
def test_registry_serde_builders_as_confluent_kafkas(fmt: str) -> None:
    # each library's own in-process registry, under a name of its own
    ours = _registry_builders("kafkawire", fmt, f"mock://ours-{fmt}")
    theirs = _registry_builders("confluent_kafka", fmt, f"mock://theirs-{fmt}")
    assert ours == theirs
    assert ours[-2][0] == "ValueError" and ours[-1] == ("RuntimeError", "init refused")


def _async_registry_builders(lib: str, fmt: str, url: str) -> list[Any]:
    module = importlib.import_module(f"{lib}.schema_registry.{fmt}")
    serialization = importlib.import_module(f"{lib}.serialization")
    prefix = {"avro": "AsyncAvro", "json_schema": "AsyncJSON", "protobuf": "AsyncProtobuf"}[fmt]
    ctx = serialization.SerializationContext("orders", serialization.MessageField.KEY)

    async def main() -> list[Any]:
        out: list[Any] = []
        for role in ("SerializerBuilder", "DeserializerBuilder"):
            cls = getattr(module, prefix + role)
            params = list(inspect.signature(cls).parameters)
            out.append(
                [
                    params,
                    sorted(n for n in dir(cls) if n.startswith("set_")),
                    issubclass(cls, getattr(serialization, role)),
                ]
            )
        seen: list[str] = []

        async def init(serde: Any) -> None:
            seen.append(type(serde).__name__)

        builder = getattr(module, prefix + "SerializerBuilder")(**_format_args(fmt, "ser"))
        builder.set_schema_registry_config({"url": url}).set_serializer_init(init)
        pending = builder.build({"a": 1}, True)
        out.append(inspect.isawaitable(pending))
        serializer, left = await pending
        out += [left, seen]
        payload = await serializer(_record(fmt), ctx)
        out.append(payload)
        # confluent-kafka's mock registry is one per client: the reader shares a second writer's
        registry = importlib.import_module(f"{lib}.schema_registry").AsyncSchemaRegistryClient.new_client({"url": url})
        writer, _ = await getattr(module, prefix + "SerializerBuilder")(
            schema_registry_client=registry, **_format_args(fmt, "ser")
        ).build({}, True)
        out.append(await writer(_record(fmt), ctx) == payload)
        await writer.aclose()
        de = getattr(module, prefix + "DeserializerBuilder")(schema_registry_client=registry, **_format_args(fmt, "de"))
        deserializer, _ = await de.build({}, True)
        out.append(str(await deserializer(payload, ctx)))
        await serializer.aclose()
        await deserializer.aclose()

        async def failing(serde: Any) -> None:
            raise RuntimeError("async init refused")

        failing_builder = getattr(module, prefix + "SerializerBuilder")(
            serializer_init=failing, **_format_args(fmt, "ser")
        )
        try:
            await failing_builder.build({}, True)
        except RuntimeError as e:
            out.append(str(e))
        return out

    return asyncio.run(main())


@pytest.mark.parametrize("fmt", FORMATS)
def test_async_registry_serde_builders_as_confluent_kafkas(fmt: str) -> None:
    ours = _async_registry_builders("kafkawire", fmt, f"mock://async-ours-{fmt}")
    theirs = _async_registry_builders("confluent_kafka", fmt, f"mock://async-theirs-{fmt}")
    assert ours == theirs
    assert ours[-1] == "async init refused"


def test_a_producer_builds_its_registry_serializer(bootstrap: str) -> None:
    """The builder through the client: a SerializingProducer made with ``value.serializer.builder``
    serializes with the serializer it built (the record's bytes as confluent-kafka's)."""
    from kafkawire.schema_registry.avro import AvroSerializerBuilder

    got: list[bytes] = []
    producer = kafkawire.SerializingProducer(
        {
            "bootstrap.servers": bootstrap,
            "value.serializer.builder": AvroSerializerBuilder(
                schema_registry_config={"url": "mock://through-producer"},
                schema=AVRO_SCHEMA,
                serializer_config={"subject.name.strategy.conf": {"subject.name.strategy.kafka.cluster.id": "c1"}},
            ),
            "key.serializer": lambda obj, ctx: got.append(obj) or b"k",
        }
    )
    producer.produce("orders", key="k", value={"id": 1, "item": "pen"})
    producer.purge()
    producer.close()
    assert got == ["k"]
