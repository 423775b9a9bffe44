"""confluent_kafka.schema_registry.serde's names: the wire framing, the rule engine's values and the
shared serde bases."""

from ._async.serde import AsyncBaseDeserializer, AsyncBaseSerde, AsyncBaseSerializer
from ._sync.rule_runner import Migration
from ._sync.serde import BaseDeserializer, BaseSerializer
from .common.rules import *  # noqa: F403
from .common.rules import __all__ as _rules
from .common.serde import *  # noqa: F403
from .common.serde import __all__ as _framing

__all__ = [
    "AsyncBaseDeserializer",
    "AsyncBaseSerde",
    "AsyncBaseSerializer",
    "BaseDeserializer",
    "BaseSerializer",
    "Migration",
    *_rules,
    *sorted(set(_framing) - set(_rules)),
]
