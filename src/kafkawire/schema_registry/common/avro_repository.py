"""An Avro schema from its text: the declaration a program gives as the Schema registered
(``_schema_loads``), and parsed with the named types other schemas define (a registered schema's
references), through fastavro's schema repository: the repository serves the named types by name."""

from __future__ import annotations

import copy
import json
from typing import Any

from fastavro.repository.base import AbstractSchemaRepository
from fastavro.schema import load_schema

from .schemas import Schema

__all__ = ["LocalSchemaRepository", "parse_schema_with_repo"]


def _schema_loads(schema_str: str) -> Schema:
    """The Schema registered for a declaration, as confluent-kafka registers it: stripped, and a
    primitive (``"string"``) as ``{"type":"string"}``, so both clients find the same registration."""
    text = schema_str.strip()
    if text[0] not in ("{", "["):
        text = '{"type":' + text + "}"
    return Schema(text, schema_type="AVRO")


class LocalSchemaRepository(AbstractSchemaRepository):
    """Schemas held in a dict, by the name fastavro asks for (None for one it does not hold)."""

    def __init__(self, schemas: dict[str, Any]) -> None:
        self.schemas = schemas

    def load(self, subject: str) -> Any:
        return self.schemas.get(subject)


def parse_schema_with_repo(schema_str: str, named_schemas: dict[str, Any]) -> Any:
    """``schema_str`` parsed by fastavro, a name it uses resolved from ``named_schemas`` (name ->
    schema), which is left as it was."""
    schemas = copy.deepcopy(named_schemas)
    schemas["$root"] = json.loads(schema_str)
    return load_schema("$root", repo=LocalSchemaRepository(schemas))
