"""AsyncProtobufSerializer and AsyncProtobufDeserializer: the synchronous ones (`_sync/protobuf.py`), awaited."""

from __future__ import annotations

from .._sync.protobuf import ProtobufDeserializer, ProtobufSerializer
from .serde import AsyncBaseDeserializer, AsyncBaseSerializer

__all__ = ["AsyncProtobufDeserializer", "AsyncProtobufSerializer"]


class AsyncProtobufSerializer(AsyncBaseSerializer):
    """``await AsyncProtobufSerializer(client, ...)``: ProtobufSerializer's arguments."""

    _sync_type = ProtobufSerializer


class AsyncProtobufDeserializer(AsyncBaseDeserializer):
    """``await AsyncProtobufDeserializer(client, ...)``: ProtobufDeserializer's arguments."""

    _sync_type = ProtobufDeserializer
