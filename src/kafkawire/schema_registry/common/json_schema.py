"""JSON text for the JSON Schema serdes: orjson when it imports, else the standard library with the
same compact, UTF-8-preserving output (so the bytes do not depend on which is installed)."""

from __future__ import annotations

import ipaddress
import json
import socket
from typing import Any
from urllib.parse import urlsplit

import httpx
from referencing import Resource
from referencing.jsonschema import DRAFT7

from .json_fields import JsonMessage as JsonMessage
from .json_fields import JsonSchema as JsonSchema
from .json_fields import _transform_field as _transform_field
from .json_fields import _validate_subschemas as _validate_subschemas
from .json_fields import get_inline_tags as get_inline_tags
from .json_fields import get_type as get_type
from .json_fields import transform as transform
from .json_fields import validate_message as validate_message
from .rules import FieldType as FieldType
from .rules import RuleContext as RuleContext
from .rules import _disjoint as _disjoint
from .schemas import JSON_TYPE as JSON_TYPE
from .schemas import RuleKind as RuleKind
from .serde import RuleConditionError as RuleConditionError
from .validation_rules import VALIDATION_RULES_PROP as VALIDATION_RULES_PROP
from .validation_rules import ValidationRule as ValidationRule
from .validation_rules import ValidationRuleError as ValidationRuleError
from .validation_rules import ValidationRuleExecutor as ValidationRuleExecutor
from .validation_rules import evaluate_validation_rule as evaluate_validation_rule
from .validation_rules import parse_validation_rules as parse_validation_rules

__all__ = ["DEFAULT_SPEC", "_HAS_ORJSON", "_json_dumps", "_json_loads", "_retrieve_via_httpx"]

# The draft a referenced schema that does not say is read as.
DEFAULT_SPEC = DRAFT7

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


def _retrieve_via_httpx(uri: str) -> Resource[Any]:
    """A ``$ref`` no registered schema defines, fetched from the web as confluent-kafka fetches it
    (a referencing Registry's ``retrieve``): only http(s), only from public addresses, no redirects."""
    _guard_external_uri(uri)
    response = httpx.get(uri, follow_redirects=False)
    return Resource.from_contents(response.json(), default_specification=DEFAULT_SPEC)


def _guard_external_uri(uri: str) -> None:
    """Refuses a URI that would reach this host or its network (a schema must not make the client
    fetch from inside it), with confluent-kafka's words."""
    parts = urlsplit(uri)
    if parts.scheme not in ("http", "https"):
        raise ValueError(f"Refusing to retrieve schema from non-HTTP(S) URI: {uri}")
    host = parts.hostname
    if not host:
        raise ValueError(f"Refusing to retrieve schema from URI without a host: {uri}")
    try:
        infos = socket.getaddrinfo(host, parts.port or (443 if parts.scheme == "https" else 80))
    except socket.gaierror as e:
        raise ValueError(f"Could not resolve schema URI host {host}: {e}") from e
    for info in infos:
        address = ipaddress.ip_address(info[4][0])
        mapped = getattr(address, "ipv4_mapped", None)
        if not (mapped or address).is_global:
            raise ValueError(f"Refusing to retrieve schema from non-public address: {uri}")
