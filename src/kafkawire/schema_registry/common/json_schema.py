"""JSON text for the JSON Schema serdes: orjson when it imports, else the standard library with the
same compact, UTF-8-preserving output (so the bytes do not depend on which is installed)."""

from __future__ import annotations

import json
from typing import Any

from .json_fields import get_inline_tags as get_inline_tags
from .json_fields import get_type as get_type
from .rules import FieldType as FieldType
from .rules import RuleContext as RuleContext
from .schemas import JSON_TYPE as JSON_TYPE
from .schemas import RuleKind as RuleKind
from .serde import RuleConditionError as RuleConditionError

__all__ = ["_HAS_ORJSON", "_json_dumps", "_json_loads"]

try:
    import orjson

    _HAS_ORJSON = True
except Exception:  # an extension can fail to initialise as well as be missing
    _HAS_ORJSON = False


if _HAS_ORJSON:

    def _json_dumps(obj: Any) -> str:
        return orjson.dumps(obj).decode("utf-8")

    def _json_loads(data: str | bytes | bytearray) -> Any:
        return orjson.loads(data)

else:

    def _json_dumps(obj: Any) -> str:
        return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)

    def _json_loads(data: str | bytes | bytearray) -> Any:
        return json.loads(data)
