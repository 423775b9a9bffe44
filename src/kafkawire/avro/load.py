"""confluent_kafka.avro.load: schemas parsed by the ``avro`` library, as the legacy API takes them.

The package rebinds its ``load`` to the function here, as confluent-kafka's does: ``from
confluent_kafka.avro import load`` gives the function, and so does ``import ...avro.load as m``.
"""

from __future__ import annotations

from typing import Any

from avro import schema
from avro.errors import SchemaParseException

from .error import ClientError

__all__ = ["load", "loads"]


def loads(schema_str: str) -> Any:
    """The ``avro.schema.Schema`` of the JSON text ``schema_str``; `ClientError` when it is not one."""
    try:
        return schema.parse(schema_str)
    except SchemaParseException as e:
        # same text as confluent-kafka: programs match on it
        raise ClientError(f"Schema parse failed: {e}") from e


def load(fp: str) -> Any:
    """The schema in the file at path ``fp``."""
    with open(fp, encoding="utf-8") as f:
        return loads(f.read())
