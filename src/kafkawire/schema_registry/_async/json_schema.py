"""AsyncJSONSerializer and AsyncJSONDeserializer: the synchronous ones (`_sync/json_schema.py`), awaited."""

from __future__ import annotations

from .._sync.json_schema import JSONDeserializer, JSONSerializer
from .serde import AsyncBaseDeserializer, AsyncBaseSerializer

__all__ = ["AsyncJSONDeserializer", "AsyncJSONSerializer"]


class AsyncJSONSerializer(AsyncBaseSerializer):
    """``await AsyncJSONSerializer(client, ...)``: JSONSerializer's arguments."""

    _sync_type = JSONSerializer


class AsyncJSONDeserializer(AsyncBaseDeserializer):
    """``await AsyncJSONDeserializer(client, ...)``: JSONDeserializer's arguments."""

    _sync_type = JSONDeserializer
