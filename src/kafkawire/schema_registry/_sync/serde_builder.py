"""The Schema Registry serde builders (``AvroSerializerBuilder`` and the others) and ``build_serde``.

A builder holds a serde's arguments until a client is made with it (``value.serializer.builder``);
it may make the registry client too, from ``schema_registry_config``, and that client is then the
serde's, closed with it (the client closes the serdes it built). Each builder is a dataclass of
its serde's arguments in confluent-kafka's order, with a chaining ``set_<argument>`` for each.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

from .schema_registry_client import SchemaRegistryClient

__all__ = ["RegistrySerdeBuilder", "build_serde"]

log = logging.getLogger(__name__)
S = TypeVar("S")


def _both(client: Any, conf: Any) -> None:
    if client is not None and conf is not None:
        # same text as confluent-kafka
        raise ValueError("Cannot specify both a Schema Registry client and a configuration; use one or the other")


def build_serde(
    schema_registry_client: SchemaRegistryClient | None,
    schema_registry_conf: dict[str, Any] | None,
    construct: Callable[[SchemaRegistryClient | None], S],
    init: Callable[[S], None] | None = None,
) -> S:
    """``construct(client)``, with a client made from ``schema_registry_conf`` when none is given
    (the serde's then: closed if ``construct`` fails, else by the serde's ``close``), then
    ``init(serde)``, the serde closed if that fails."""
    _both(schema_registry_client, schema_registry_conf)
    made = None if schema_registry_conf is None else SchemaRegistryClient.new_client(schema_registry_conf)
    try:
        serde = construct(made if made is not None else schema_registry_client)
    except BaseException:
        _quietly(made, "the Schema Registry client of a serde that failed to build")
        raise
    if made is not None:
        serde.own_schema_registry_client()  # type: ignore[attr-defined]
    if init is not None:
        try:
            init(serde)
        except BaseException:
            _quietly(serde, "a serde whose init callback failed")
            raise
    return serde


def _quietly(closable: Any, what: str) -> None:
    """Close after a failure: the failure is what is raised, a close error only logged."""
    if closable is None:
        return
    try:
        closable.close()
    except Exception:
        log.warning("Failed to close %s", what, exc_info=True)


def _setter(name: str) -> Callable[[Any, Any], Any]:
    def set_value(self: Any, value: Any) -> Any:
        setattr(self, name, value)
        return self

    set_value.__name__ = set_value.__qualname__ = f"set_{name}"
    set_value.__doc__ = f"Sets ``{name}`` (a constructor argument); returns the builder, to chain."
    return set_value


# A serde's constructor argument -> the builder field holding it, where the names differ (``conf``
# is the builder's serializer_config or deserializer_config).
_FIELD_OF = {"schema_str": "schema", "msg_type": "message_type", "rule_conf": "rule_config"}


class RegistrySerdeBuilder:
    """Base of the format builders (dataclasses, see the module). ``_serde_type`` is the serde the
    fields are the arguments of (an asyncio serde: its synchronous serde's); ``_init_field`` names
    the field of the callback run on the built serde."""

    _init_field: ClassVar[str]
    _serde_type: ClassVar[Callable[..., Any]]
    schema_registry_config: dict[str, Any] | None
    schema_registry_client: Any

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for name in inspect.get_annotations(cls):
            if not name.startswith("_"):
                setattr(cls, f"set_{name}", _setter(name))

    def _construct(self, client: Any) -> Any:
        """The serde, each constructor argument from its field (the registry client: ``client``)."""
        serde = self._serde_type
        conf_field = self._init_field.replace("_init", "_config")
        args: dict[str, Any] = {}
        for name in inspect.signature(getattr(serde, "_sync_type", serde)).parameters:
            if name == "schema_registry_client":
                args[name] = client
            else:
                args[name] = getattr(self, conf_field if name == "conf" else _FIELD_OF.get(name, name))
        return serde(**args)

    def _check(self) -> None:
        """Refuse, before anything is made, a builder whose serde could not be (a format's rule)."""

    def build(self, conf: dict[str, Any], is_key: bool) -> Any:
        """The serde and the client's configuration, all of it left over (no builder reads any)."""
        self._check()
        init = getattr(self, self._init_field)
        return build_serde(self.schema_registry_client, self.schema_registry_config, self._construct, init), dict(conf)
