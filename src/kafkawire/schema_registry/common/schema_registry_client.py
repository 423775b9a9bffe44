"""confluent_kafka.schema_registry.common.schema_registry_client's names: the registry's values
(schemas.py: schemas, references, metadata, rules, configs; associations.py: the association
API's; schema_cache.py: the client's cache; bearer_fields.py: the static bearer field providers), and the REST client's retry arithmetic.
"""

from __future__ import annotations

import random
from typing import Any

from .associations import (
    Association,
    AssociationCreateOrUpdateInfo,
    AssociationCreateOrUpdateRequest,
    AssociationInfo,
    AssociationResponse,
)
from .bearer_fields import _AsyncStaticFieldProvider, _StaticFieldProvider
from .schema_cache import _SchemaCache
from .schemas import (
    ConfigCompatibilityLevel,
    Metadata,
    MetadataProperties,
    MetadataTags,
    RegisteredSchema,
    Rule,
    RuleKind,
    RuleMode,
    RuleParams,
    RulePhase,
    RuleSet,
    Schema,
    SchemaReference,
    SchemaVersion,
    ServerConfig,
)

__all__ = [
    "VALID_AUTH_PROVIDERS",
    "Association",
    "AssociationCreateOrUpdateInfo",
    "AssociationCreateOrUpdateRequest",
    "AssociationInfo",
    "AssociationResponse",
    "ConfigCompatibilityLevel",
    "Metadata",
    "MetadataProperties",
    "MetadataTags",
    "RegisteredSchema",
    "Rule",
    "RuleKind",
    "RuleMode",
    "RuleParams",
    "RulePhase",
    "RuleSet",
    "Schema",
    "SchemaReference",
    "SchemaVersion",
    "ServerConfig",
    "_AsyncStaticFieldProvider",
    "_SchemaCache",
    "_StaticFieldProvider",
    "full_jitter",
    "is_retriable",
    "is_success",
    "normalize_identity_pool",
]


# confluent-kafka's list of basic.auth.credentials.source values (the client takes SASL_INHERIT too).
VALID_AUTH_PROVIDERS = ["URL", "USER_INFO"]


def is_success(status_code: int) -> bool:
    return 200 <= status_code <= 299


def is_retriable(status_code: int) -> bool:
    """Worth another try: rate limited, or the server (or a proxy before it) is struggling."""
    return status_code in (408, 429, 500, 502, 503, 504)


def full_jitter(base_delay_ms: int, max_delay_ms: int, retries_attempted: int) -> float:
    """Milliseconds (as confluent-kafka's function of this name) to wait before retry number
    ``retries_attempted + 1``: uniform in [0, min(max, base*2^n)]."""
    cap = min(max_delay_ms, base_delay_ms * (2**retries_attempted))
    return float(random.random() * cap)


def normalize_identity_pool(pool: Any) -> str | None:
    """``bearer.auth.identity.pool.id``: one id, or several (a list) sent comma-separated."""
    if pool is None or isinstance(pool, str):
        return pool
    if isinstance(pool, list) and all(isinstance(p, str) for p in pool):
        return ",".join(pool)
    # same text as confluent-kafka: its tests match on it
    raise TypeError(f"identity pool id must be a str or list, not {type(pool)}")
