"""Producer interceptors, as Kafka's ``ProducerInterceptor``: observe and rewrite records in flight.

``interceptor.classes`` lists classes, instances or dotted paths. Each interceptor may define any of
``configure(config)``, ``on_send(record) -> record``, ``on_acknowledgement(metadata, exception)``
and ``close()``. ``on_send`` runs in list order in the thread calling ``produce()``/``send()``,
before serialization and partitioning, each getting the previous one's record; if one raises, the
error is logged and the next gets the last good record. ``on_acknowledgement`` runs on the
producer's IO thread, before the user's callback, also for records that failed before reaching a
broker (partition -1 when none was assigned); its exceptions are logged and ignored. Interceptors
may therefore be called from several threads at once and must be thread-safe themselves.

Each ``on_send`` gets its own copy of the record (headers included), so an interceptor that
changes the record in place and then raises cannot leak its half-done changes to the next one.
``configure`` also gets its own copy of the config. ``close()`` runs once, however often the chain
is closed. An entry that cannot be loaded (bad path, import error, no hook methods, a constructor
that raises) is a configuration error: `KafkaException` with ``_INVALID_ARG`` naming the entry.
"""

from __future__ import annotations

import functools
import importlib
import logging
import threading
from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ..base.debug import APP, OFF, Debug
from ..base.model import TIMESTAMP_NOT_AVAILABLE
from ..core.kafka_error import KafkaError, KafkaException

if TYPE_CHECKING:
    from ..base.record_metadata import RecordMetadata
    from .producer_record import ProducerRecord

log = logging.getLogger("kafkawire.producer")


@functools.cache
def record_types() -> ModuleType:
    """`kafkawire.producer.producer_record` (`ProducerRecord`, `RecordMetadata`, send()'s forms),
    imported by the first record object made: a plain producer's start-up makes none, and their
    dataclasses cost a millisecond each to create. Cached: a call is cheaper than an import
    statement on the per-record paths that use it."""
    from . import producer_record

    return producer_record


HOOKS = ("on_send", "on_acknowledgement", "configure", "close")
NO_PARTITION = -1  # RecordMetadata.NO_PARTITION in the Java client


def _invalid(spec: Any, reason: str) -> KafkaException:
    return KafkaException(
        KafkaError(KafkaError._INVALID_ARG, f'Invalid value {spec!r} in "interceptor.classes": {reason}')
    )


def load(spec: Any) -> Any:
    """An interceptor from a class (instantiated without arguments), an instance, or a dotted path.

    Raises `KafkaException` (``_INVALID_ARG``) naming the entry when it cannot be loaded.
    """
    given = spec
    if isinstance(spec, str):
        module_name, _, attr = spec.rpartition(".")
        if not module_name or not attr:
            raise _invalid(given, "not a dotted path module.Class")
        try:
            module = importlib.import_module(module_name)
        except Exception as exc:
            raise _invalid(given, f"cannot import module {module_name!r}: {exc!r}") from exc
        try:
            spec = getattr(module, attr)
        except AttributeError:
            raise _invalid(given, f"module {module_name!r} has no attribute {attr!r}") from None
    if isinstance(spec, type):
        try:
            spec = spec()
        except Exception as exc:
            raise _invalid(given, f"{spec.__name__}() raised {exc!r}") from exc
    if not any(hasattr(spec, m) for m in HOOKS):
        raise _invalid(given, "it has none of " + ", ".join(HOOKS))
    return spec


def _name(interceptor: Any) -> str:
    """An interceptor as diagnostics name it: its class (its repr may hold anything)."""
    return type(interceptor).__name__


class InterceptorChain:
    def __init__(self, interceptors: Sequence[Any], config: Mapping[str, Any]) -> None:
        self.interceptors = [load(i) for i in interceptors]
        self._close_lock = threading.Lock()
        self._closed = False
        self._debug = OFF  # the producer's, once its client exists (`diagnose`)
        for i in self.interceptors:
            configure = getattr(i, "configure", None)
            if configure is not None:
                configure(dict(config))  # each its own copy: they share one namespace

    def __bool__(self) -> bool:
        return bool(self.interceptors)

    def diagnose(self, debug: Debug) -> None:
        """Write the ``interceptor`` context's lines to ``debug`` from now on: the chain first,
        then each hook called, and each failure."""
        self._debug = debug
        if debug.interceptor:
            for i in self.interceptors:
                hooks = ", ".join(h for h in HOOKS if hasattr(i, h))
                debug.log("interceptor", "INTERCEPTOR", APP, "Interceptor %s added (%s)", _name(i), hooks)

    def _called(self, interceptor: Any, hook: str, record: Any, error: BaseException | None = None) -> None:
        """A hook's call (``record``: a ProducerRecord or RecordMetadata), and its failure if any."""
        where = f"{record.topic} [{record.partition}]" if record is not None else "the producer"
        if error is None:
            self._debug.log(
                "interceptor", "INTERCEPTOR", APP, "Interceptor %s %s for %s", _name(interceptor), hook, where
            )
        else:
            self._debug.log(
                "interceptor",
                "ICFAIL",
                APP,
                "Interceptor %s failed %s for %s: %s: %s",
                _name(interceptor),
                hook,
                where,
                type(error).__name__,
                error,
            )

    def on_send(self, record: ProducerRecord) -> ProducerRecord:
        records = record_types()
        for i in self.interceptors:
            hook = getattr(i, "on_send", None)
            if hook is None:
                continue
            try:
                result = hook(records.copy_record(record))
            except Exception as exc:
                if self._debug.interceptor:
                    self._called(i, "on_send", record, exc)
                log.exception("interceptor %r on_send failed; the record goes on unchanged", i)
                continue
            if self._debug.interceptor:
                self._called(i, "on_send", record)
            if isinstance(result, records.ProducerRecord):
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
            except Exception as exc:
                if self._debug.interceptor:
                    self._called(i, "on_acknowledgement", metadata, exc)
                log.exception("interceptor %r on_acknowledgement failed (ignored)", i)
                continue
            if self._debug.interceptor:
                self._called(i, "on_acknowledgement", metadata)

    def on_send_error(self, record: ProducerRecord, exception: KafkaException) -> None:
        """``on_acknowledgement`` for a record that ``produce()``/``send()`` refused (it raised): the
        Java client's ``onSendError``. The metadata carries the topic and the partition the record
        asked for (-1 when none), no offset and no timestamp, and the record's id when valid."""
        if not self.interceptors:
            return
        records = record_types()
        partition = record.partition if isinstance(record.partition, int) else NO_PARTITION
        try:
            record_id = records.checked_id(record.id)
        except (TypeError, ValueError):  # (what the refusal may be about)
            record_id = None
        metadata = records.RecordMetadata(
            str(record.topic), partition, -1, -1, TIMESTAMP_NOT_AVAILABLE, -1, -1, record_id
        )
        self.on_acknowledgement(metadata, exception)

    def close(self) -> None:
        """Close every interceptor once (later calls do nothing); exceptions are logged."""
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        for i in self.interceptors:
            hook = getattr(i, "close", None)
            if hook is None:
                continue
            try:
                hook()
            except Exception as exc:
                if self._debug.interceptor:
                    self._called(i, "close", None, exc)
                log.exception("interceptor %r close failed (ignored)", i)
                continue
            if self._debug.interceptor:
                self._called(i, "close", None)
