"""Avro serializer and deserializer (``pip install kafkawire[avro]``)."""

from ._async.avro import (
    AsyncAvroDeserializer,
    AsyncAvroDeserializerBuilder,
    AsyncAvroSerializer,
    AsyncAvroSerializerBuilder,
)
from ._sync.avro import AvroDeserializer, AvroDeserializerBuilder, AvroSerializer, AvroSerializerBuilder
from .common.avro_fields import AvroMessage as AvroMessage
from .common.avro_fields import AvroSchema as AvroSchema
from .common.avro_fields import _collapse_schema as _collapse_schema
from .common.avro_fields import _get_inline_tags_recursively as _get_inline_tags_recursively
from .common.avro_fields import _implied_namespace as _implied_namespace
from .common.avro_fields import _resolve_union as _resolve_union
from .common.avro_fields import _transform_field as _transform_field
from .common.avro_fields import get_inline_tags as get_inline_tags
from .common.avro_fields import get_type as get_type
from .common.avro_fields import transform as transform
from .common.avro_fields import validate_message as validate_message
from .common.avro_repository import LocalSchemaRepository as LocalSchemaRepository
from .common.avro_repository import _schema_loads as _schema_loads
from .common.avro_repository import parse_schema_with_repo as parse_schema_with_repo
from .common.rules import FieldType as FieldType
from .common.rules import RuleContext as RuleContext
from .common.rules import _disjoint as _disjoint
from .common.schemas import AVRO_TYPE as AVRO_TYPE
from .common.schemas import RuleKind as RuleKind
from .common.schemas import Schema as Schema
from .common.serde import RuleConditionError as RuleConditionError
from .common.validation_rules import VALIDATION_RULES_PROP as VALIDATION_RULES_PROP
from .common.validation_rules import ValidationRule as ValidationRule
from .common.validation_rules import ValidationRuleError as ValidationRuleError
from .common.validation_rules import ValidationRuleExecutor as ValidationRuleExecutor
from .common.validation_rules import evaluate_validation_rule as evaluate_validation_rule
from .common.validation_rules import parse_validation_rules as parse_validation_rules
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
