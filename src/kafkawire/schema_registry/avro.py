"""Avro serializer and deserializer (``pip install kafkawire[avro]``)."""

from ._async.avro import (
    AsyncAvroDeserializer,
    AsyncAvroDeserializerBuilder,
    AsyncAvroSerializer,
    AsyncAvroSerializerBuilder,
)
from ._sync.avro import AvroDeserializer, AvroDeserializerBuilder, AvroSerializer, AvroSerializerBuilder
from .common.avro_fields import _resolve_union as _resolve_union
from .common.avro_fields import _transform_field as _transform_field
from .common.rules import FieldType as FieldType
from .common.rules import RuleContext as RuleContext
from .common.schemas import AVRO_TYPE as AVRO_TYPE
from .common.schemas import RuleKind as RuleKind
from .common.schemas import Schema as Schema
from .common.serde import RuleConditionError as RuleConditionError
from .confluent.type.variant_utils import Variant as Variant

__all__ = [
    "AsyncAvroDeserializer",
    "AsyncAvroDeserializerBuilder",
    "AsyncAvroSerializer",
    "AsyncAvroSerializerBuilder",
    "AvroDeserializer",
    "AvroDeserializerBuilder",
    "AvroSerializer",
    "AvroSerializerBuilder",
]
