"""CEL rules: conditions and transforms on a whole record (CEL) or on each field (CEL_FIELD)."""

from ...common.serde import RuleError as RuleError
