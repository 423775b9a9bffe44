"""The serializing clients' serde plumbing (confluent-kafka's ``_serde_builder``: builders, owned
serdes, cluster id resolvers) and the blocking clients built on it, each against confluent-kafka's.
The clients point at a closed loopback port: nothing here waits on a broker."""

from __future__ import annotations

import asyncio
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
