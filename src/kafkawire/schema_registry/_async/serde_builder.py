"""The asyncio serde builders' base and ``async_build_serde``: `_sync/serde_builder.py`'s, with the
serde, its init callback and the closing of a client made for it awaited (``build`` returns a
coroutine, which the asyncio clients await)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

from .._sync.serde_builder import RegistrySerdeBuilder, _both
from .schema_registry_client import AsyncSchemaRegistryClient

__all__ = ["AsyncRegistrySerdeBuilder", "async_build_serde"]

log = logging.getLogger(__name__)
S = TypeVar("S")


async def async_build_serde(
    schema_registry_client: AsyncSchemaRegistryClient | None,
    schema_registry_conf: dict[str, Any] | None,
    construct: Callable[[AsyncSchemaRegistryClient | None], Awaitable[S]],
    init: Callable[[S], Awaitable[None]] | None = None,
) -> S:
    """`build_serde` with ``construct`` and ``init`` awaited."""
    _both(schema_registry_client, schema_registry_conf)
    made = None if schema_registry_conf is None else AsyncSchemaRegistryClient.new_client(schema_registry_conf)
    try:
        serde = await construct(made if made is not None else schema_registry_client)
    except BaseException:
        if made is not None:
            await _quietly(made.close, "the Schema Registry client of a serde that failed to build")
        raise
    if made is not None:
        serde.own_schema_registry_client()  # type: ignore[attr-defined]
    if init is not None:
        try:
            await init(serde)
        except BaseException:
            await _quietly(serde.aclose, "a serde whose init callback failed")  # type: ignore[attr-defined]
            raise
    return serde


async def _quietly(close: Callable[[], Awaitable[None]], what: str) -> None:
    try:
        await close()
    except Exception:
        log.warning("Failed to close %s", what, exc_info=True)


class AsyncRegistrySerdeBuilder(RegistrySerdeBuilder):
    """Base of the asyncio format builders: ``_construct`` returns the awaitable serde."""

    def build(self, conf: dict[str, Any], is_key: bool) -> Coroutine[Any, Any, tuple[Any, dict[str, Any]]]:
        return self._build(dict(conf))

    async def _build(self, conf: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        self._check()
        init = getattr(self, self._init_field)
        serde = await async_build_serde(self.schema_registry_client, self.schema_registry_config, self._construct, init)
        return serde, conf
