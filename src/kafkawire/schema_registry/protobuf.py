"""Protobuf serializer and deserializer (``pip install kafkawire[protobuf]``)."""

from decimal import MAX_EMAX as MAX_EMAX
from decimal import MAX_PREC as MAX_PREC
from decimal import MIN_EMIN as MIN_EMIN
from decimal import ROUND_HALF_UP as ROUND_HALF_UP

from ..serialization import SerializationError as SerializationError
from ._async.protobuf import (
    AsyncProtobufDeserializer,
    AsyncProtobufDeserializerBuilder,
    AsyncProtobufSerializer,
    AsyncProtobufSerializerBuilder,
)
from ._sync.protobuf import DECIMAL_TYPE_NAME as DECIMAL_TYPE_NAME
from ._sync.protobuf import TIMESTAMP_TYPE_NAME as TIMESTAMP_TYPE_NAME
from ._sync.protobuf import (
    ProtobufDeserializer,
    ProtobufDeserializerBuilder,
    ProtobufSerializer,
    ProtobufSerializerBuilder,
    _bytes,
    _create_index_array,
    _init_pool,
    _is_builtin,
    _proto_to_str,
    _schema_to_str,
    _str_to_proto,
    decimal_to_protobuf,
    protobuf_to_decimal,
    protobuf_to_variant,
    reference_subject_name_strategy,
    variant_to_protobuf,
)
from .common.protobuf_fields import MAX_ENCODABLE_COEFFICIENT_DIGITS as MAX_ENCODABLE_COEFFICIENT_DIGITS
from .common.protobuf_fields import PROTOBUF_MAJOR_VERSION as PROTOBUF_MAJOR_VERSION
from .common.protobuf_fields import _is_repeated as _is_repeated
from .common.protobuf_fields import _set_field as _set_field
from .common.protobuf_fields import _transform_field as _transform_field
from .common.protobuf_fields import get_inline_tags as get_inline_tags
from .common.protobuf_fields import get_type as get_type
from .common.protobuf_fields import is_cel_leaf_message as is_cel_leaf_message
from .common.protobuf_fields import is_map_field as is_map_field
from .common.protobuf_fields import rebuild_value_type as rebuild_value_type
from .common.protobuf_fields import set_decimal_message as set_decimal_message
from .common.protobuf_fields import set_timestamp_message as set_timestamp_message
from .common.protobuf_fields import transform as transform
from .common.protobuf_fields import validate_message as validate_message
from .common.rules import FieldType as FieldType
from .common.rules import RuleContext as RuleContext
from .common.rules import _disjoint as _disjoint
from .common.schemas import PROTOBUF_TYPE as PROTOBUF_TYPE
from .common.schemas import RuleKind as RuleKind
from .common.serde import RuleConditionError as RuleConditionError
from .common.serde import RuleError as RuleError
from .common.validation_rules import ValidationRule as ValidationRule
from .common.validation_rules import ValidationRuleError as ValidationRuleError
from .common.validation_rules import ValidationRuleExecutor as ValidationRuleExecutor
from .common.validation_rules import evaluate_validation_rule as evaluate_validation_rule
from .confluent.type import variant_pb2 as variant_pb2
from .confluent.type.decimal_utils import unscaled_to_bytes as unscaled_to_bytes
from .confluent.type.variant_utils import Variant as Variant

__all__ = [
    "AsyncProtobufDeserializer",
    "AsyncProtobufDeserializerBuilder",
    "AsyncProtobufSerializer",
    "AsyncProtobufSerializerBuilder",
    "ProtobufDeserializer",
    "ProtobufDeserializerBuilder",
    "ProtobufSerializer",
    "ProtobufSerializerBuilder",
    "_bytes",
    "_create_index_array",
    "_init_pool",
    "_is_builtin",
    "_proto_to_str",
    "_schema_to_str",
    "_str_to_proto",
    "decimal_to_protobuf",
    "protobuf_to_decimal",
    "protobuf_to_variant",
    "reference_subject_name_strategy",
    "variant_to_protobuf",
]
