"""Config calls: describe, alter (deprecated, whole sets) and incrementally alter configs of topics and brokers."""

from __future__ import annotations

import warnings
from concurrent.futures import Future
from typing import Any

from ..client import routers
from ..client.driver import Router
from ..core.kafka_error import KafkaError, KafkaException
from ..core.policy.admin import ADMIN_READ
from ..protocol.apis import (
    ALTER_CONFIGS,
    DESCRIBE_CONFIGS,
    INCREMENTAL_ALTER_CONFIGS,
)
from ..protocol.codec import Struct
from .base import AdminBase, _check_list, _controller_unless, _error, _failed, _no_duplicates, _wire_configs
from .types import (
    CONFIG_WIRE_TYPE,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    ResourceType,
)


class ConfigCalls(AdminBase):
    """Configs of topics and brokers."""

    def _config_resources(self, resources: Any, element_error: type[Exception]) -> tuple[list[ConfigResource], Router]:
        """Checked resources and where they go: the one BROKER resource's broker, else ``None``."""
        items = _check_list(resources, "ConfigResource objects", ConfigResource, error=element_error)
        _no_duplicates(items, "resources")
        brokers = [r for r in items if r.restype is ResourceType.BROKER]
        if len(brokers) > 1:
            raise ValueError("Only one ConfigResource of type BROKER is allowed per call")
        for r in items:
            if r.restype not in CONFIG_WIRE_TYPE:
                raise ValueError(f"Unsupported resource type {r.restype} for {r.name}")
        if brokers:
            try:
                node = int(brokers[0].name)
            except ValueError:
                raise ValueError(
                    f"Expected an int32 broker_id for ConfigResource(type=BROKER, name={brokers[0].name})"
                ) from None
            return items, routers.ToNode(node)
        return items, routers.ANY_BROKER

    def describe_configs(
        self, resources: list[ConfigResource], **kwargs: Any
    ) -> dict[ConfigResource, Future[dict[str, ConfigEntry]]]:
        """Every config entry of each resource, with synonyms; at most one BROKER resource per call."""
        items, router = self._config_resources(resources, ValueError)
        request_s, _, _ = self._options(kwargs)

        def body(keys: list[ConfigResource], version: int) -> dict[str, Any]:
            return {
                "resources": [
                    {"resource_type": CONFIG_WIRE_TYPE[r.restype], "resource_name": r.name, "configuration_keys": None}
                    for r in keys
                ],
                "include_synonyms": True,
            }

        def parse(response: Struct, keys: list[ConfigResource], node: int | None) -> dict[ConfigResource, Any]:
            by_wire = {(CONFIG_WIRE_TYPE[r.restype], r.name): r for r in keys}
            out: dict[ConfigResource, Any] = {}
            for result in response.results:
                key = by_wire.get((result.resource_type, result.resource_name))
                if key is None:
                    continue
                error = _error(result.error_code, result.get("error_message"))
                out[key] = error if error is not None else {c.name: _config_entry(c) for c in result.configs}
            return out

        return self._run(items, DESCRIBE_CONFIGS, router, body, parse, request_s, policy=ADMIN_READ)

    def alter_configs(self, resources: list[ConfigResource], **kwargs: Any) -> dict[ConfigResource, Future[None]]:
        """Replace the whole dynamic configuration of each resource with its ``set_config`` values.

        Warning: every dynamic key of the resource that is not set is reverted to its default.
        Prefer `incremental_alter_configs`, which changes only the keys named.
        """
        # same text as confluent-kafka: programs filter this warning by its text
        warnings.warn(
            "alter_configs has been deprecated. Use incremental_alter_configs instead.",
            DeprecationWarning,
            stacklevel=2,
        )
        items, router = self._config_resources(resources, ValueError)
        request_s, _, validate_only = self._options(kwargs, validate=True)

        def body(keys: list[ConfigResource], version: int) -> dict[str, Any]:
            return {
                "resources": [
                    {
                        "resource_type": CONFIG_WIRE_TYPE[r.restype],
                        "resource_name": r.name,
                        "configs": _wire_configs(r.set_config_dict),
                    }
                    for r in keys
                ],
                "validate_only": validate_only,
            }

        return self._run(items, ALTER_CONFIGS, _controller_unless(router), body, _alter_parse, request_s)

    def incremental_alter_configs(
        self, resources: list[ConfigResource], **kwargs: Any
    ) -> dict[ConfigResource, Future[None]]:
        """Apply each resource's ``incremental_configs`` (SET, DELETE, APPEND, SUBTRACT); other keys stay."""
        items, router = self._config_resources(resources, TypeError)
        request_s, _, validate_only = self._options(kwargs, validate=True)
        duplicated = None
        for r in items:
            if not r.incremental_configs:
                raise ValueError(
                    "expected non-empty list of ConfigEntry to alter incrementally in incremental_configs field"
                )
            for entry in r.incremental_configs:
                if not isinstance(entry, ConfigEntry):
                    raise TypeError("incremental_configs must hold ConfigEntry objects")
                if not isinstance(entry.name, str):
                    raise TypeError(f"ConfigEntry name must be a string, not {type(entry.name).__name__}")
                if not isinstance(entry.incremental_operation, AlterConfigOpType):
                    raise TypeError("ConfigEntry.incremental_operation must be an AlterConfigOpType")
                if entry.incremental_operation is not AlterConfigOpType.DELETE and not isinstance(entry.value, str):
                    raise TypeError(
                        f"ConfigEntry {entry.name}: value must be a string for {entry.incremental_operation.name}"
                    )
            names = [e.name for e in r.incremental_configs]
            if len(set(names)) != len(names):
                duplicated = r
        if duplicated is not None:  # librdkafka refuses the whole request: every future fails _INVALID_ARG
            error = KafkaException(KafkaError(KafkaError._INVALID_ARG, f"Duplicate ConfigEntry found in {duplicated}"))
            return {r: _failed(error) for r in items}

        def body(keys: list[ConfigResource], version: int) -> dict[str, Any]:
            return {
                "resources": [
                    {
                        "resource_type": CONFIG_WIRE_TYPE[r.restype],
                        "resource_name": r.name,
                        "configs": [
                            {
                                "name": e.name,
                                "config_operation": e.incremental_operation.value,  # type: ignore[union-attr]
                                "value": None if e.incremental_operation is AlterConfigOpType.DELETE else e.value,
                            }
                            for e in r.incremental_configs
                        ],
                    }
                    for r in keys
                ],
                "validate_only": validate_only,
            }

        return self._run(items, INCREMENTAL_ALTER_CONFIGS, _controller_unless(router), body, _alter_parse, request_s)


def _config_entry(c: Struct) -> ConfigEntry:
    source = ConfigSource.from_wire(c.get("config_source", -1))
    synonyms = {
        s.name: ConfigEntry(s.name, s.value, ConfigSource.from_wire(s.source), is_synonym=True)
        for s in c.get("synonyms") or ()
        if s.name != c.name or ConfigSource.from_wire(s.source) is not source
    }
    is_default = c.get("is_default", False) or source is ConfigSource.DEFAULT_CONFIG
    return ConfigEntry(
        c.name,
        None if c.is_sensitive else c.value,
        source,
        is_read_only=c.read_only,
        is_default=is_default,
        is_sensitive=c.is_sensitive,
        synonyms=synonyms,
    )


def _alter_parse(response: Struct, keys: list[ConfigResource], node: int | None) -> dict[ConfigResource, Any]:
    by_wire = {(CONFIG_WIRE_TYPE[r.restype], r.name): r for r in keys}
    out: dict[ConfigResource, Any] = {}
    for r in response.responses:
        key = by_wire.get((r.resource_type, r.resource_name))
        if key is not None:
            out[key] = _error(r.error_code, r.get("error_message"))
    return out
