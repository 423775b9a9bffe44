"""confluent_kafka.schema_registry.serde's names: the wire framing and the shared serde bases."""

from ._sync.serde import BaseDeserializer, BaseSerializer
from .common.serde import *  # noqa: F403
from .common.serde import __all__ as _framing

__all__ = ["BaseDeserializer", "BaseSerializer", *_framing]
