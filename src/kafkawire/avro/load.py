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


def _hash_by_text(self: Any) -> int:
    return hash(str(self))


# The legacy client keys its caches by schema object, and the avro library's record, primitive and
# union schemas define equality without a hash: importing confluent-kafka's module gives those three
# classes a hash of their JSON text, and programs rely on it (a dict or set of schemas).
for _kind in (schema.RecordSchema, schema.PrimitiveSchema, schema.UnionSchema):
    setattr(_kind, "__hash__", _hash_by_text)  # noqa: B010 (mypy reads typed and untyped avro releases alike)


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
