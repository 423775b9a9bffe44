"""confluent_kafka.schema_registry.serde's names: the wire framing, the rule engine's values, inline
validation rules and the shared serde bases."""

from ._async.serde import AsyncAssociatedNameStrategy as AsyncAssociatedNameStrategy
from ._async.serde import AsyncBaseDeserializer, AsyncBaseSerde, AsyncBaseSerializer
from ._async.serde_builder import async_build_serde as async_build_serde
from ._sync.associated_name_strategy import FALLBACK_TYPE as FALLBACK_TYPE
from ._sync.associated_name_strategy import KAFKA_CLUSTER_ID as KAFKA_CLUSTER_ID
from ._sync.associated_name_strategy import STRATEGY_TYPE_MAP as STRATEGY_TYPE_MAP
from ._sync.associated_name_strategy import AssociatedNameStrategy as AssociatedNameStrategy
from ._sync.rule_runner import Migration
from ._sync.serde import BaseDeserializer, BaseSerializer
from ._sync.serde import BaseSerde as BaseSerde
from ._sync.serde_builder import build_serde as build_serde
from .common.parsed_schema_cache import ParsedSchemaCache as ParsedSchemaCache
from .common.rules import *  # noqa: F403
from .common.rules import __all__ as _rules
from .common.serde import *  # noqa: F403
from .common.serde import __all__ as _framing
from .common.validation_options import default_validation_rule_executor as default_validation_rule_executor
from .common.validation_rules import *  # noqa: F403
from .common.validation_rules import __all__ as _validation

__all__ = [
    "AsyncBaseDeserializer",
    "AsyncBaseSerde",
    "AsyncBaseSerializer",
    "BaseDeserializer",
    "BaseSerializer",
    "Migration",
    *_rules,
    *sorted(set(_framing) - set(_rules)),
    *_validation,
    "ParsedSchemaCache",
    "default_validation_rule_executor",
]
