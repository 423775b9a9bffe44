"""AsyncAvroSerializer and AsyncAvroDeserializer: the synchronous ones (`_sync/avro.py`), awaited."""

from __future__ import annotations

from .._sync.avro import AvroDeserializer, AvroSerializer
from .serde import AsyncBaseDeserializer, AsyncBaseSerializer

__all__ = ["AsyncAvroDeserializer", "AsyncAvroSerializer"]


class AsyncAvroSerializer(AsyncBaseSerializer):
    """``await AsyncAvroSerializer(client, ...)``: AvroSerializer's arguments."""

    _sync_type = AvroSerializer


class AsyncAvroDeserializer(AsyncBaseDeserializer):
    """``await AsyncAvroDeserializer(client, ...)``: AvroDeserializer's arguments."""

    _sync_type = AvroDeserializer
