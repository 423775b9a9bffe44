"""Producer interceptors, as Kafka's ``ProducerInterceptor``: observe and rewrite records in flight.

``interceptor.classes`` lists classes, instances or dotted paths. Each interceptor may define any of
``configure(config)``, ``on_send(record) -> record``, ``on_acknowledgement(metadata, exception)``
and ``close()``. ``on_send`` runs in list order in the thread calling ``produce()``/``send()``,
before serialization and partitioning, each getting the previous one's record; if one raises, the
error is logged and the next gets the last good record. ``on_acknowledgement`` runs on the
producer's IO thread, before the user's callback, also for records that failed before reaching a
broker (partition -1 when none was assigned); its exceptions are logged and ignored. Interceptors
may therefore be called from several threads at once and must be thread-safe themselves.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import KafkaException
from ..model import RecordMetadata

log = logging.getLogger("kafkawire.producer")


@dataclass
class ProducerRecord:
    """A record as the application handed it to the producer, before serialization."""

    topic: str
    value: Any = None
    key: Any = None
    partition: int = -1
    timestamp: int = 0
    headers: Any = None


def load(spec: Any) -> Any:
    """An interceptor from a class (instantiated without arguments), an instance, or a dotted path."""
    if isinstance(spec, str):
        module_name, _, attr = spec.rpartition(".")
        if not module_name:
            raise ValueError(f"interceptor {spec!r} is not a dotted path module.Class")
        spec = getattr(importlib.import_module(module_name), attr)
    if isinstance(spec, type):
        spec = spec()
    if not any(hasattr(spec, m) for m in ("on_send", "on_acknowledgement", "configure", "close")):
        raise ValueError(f"{spec!r} has none of on_send, on_acknowledgement, configure, close")
    return spec


class InterceptorChain:
    def __init__(self, interceptors: Sequence[Any], config: Mapping[str, Any]) -> None:
        self.interceptors = [load(i) for i in interceptors]
        for i in self.interceptors:
            configure = getattr(i, "configure", None)
            if configure is not None:
                configure(dict(config))

    def __bool__(self) -> bool:
        return bool(self.interceptors)

    def on_send(self, record: ProducerRecord) -> ProducerRecord:
        for i in self.interceptors:
            hook = getattr(i, "on_send", None)
            if hook is None:
                continue
            try:
                result = hook(record)
            except Exception:
                log.exception("interceptor %r on_send failed; the record goes on unchanged", i)
                continue
            if isinstance(result, ProducerRecord):
                record = result
            else:
                log.error("interceptor %r on_send returned %r, not a ProducerRecord; ignored", i, result)
        return record

    def on_acknowledgement(self, metadata: RecordMetadata, exception: KafkaException | None) -> None:
        for i in self.interceptors:
            hook = getattr(i, "on_acknowledgement", None)
            if hook is None:
                continue
            try:
                hook(metadata, exception)
            except Exception:
                log.exception("interceptor %r on_acknowledgement failed (ignored)", i)

    def close(self) -> None:
        for i in self.interceptors:
            hook = getattr(i, "close", None)
            if hook is None:
                continue
            try:
                hook()
            except Exception:
                log.exception("interceptor %r close failed (ignored)", i)
