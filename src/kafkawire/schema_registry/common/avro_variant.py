"""Avro's ``variant`` logical type: a record ``{metadata: bytes, value: bytes}`` that holds a
Variant (Spark's and Parquet's semi-structured value). fastavro reads such a record as a
``Variant`` and writes a ``Variant`` given for one, as confluent-kafka (and Java's
``VariantConversion``) do, so a record's variant field is the value a program and a CEL rule use.

fastavro keeps its logical-type handlers in process-wide tables keyed ``"<avro type>-<logical
type>"``: installing these is what importing confluent-kafka's Avro serde does too.
"""

from __future__ import annotations

from typing import Any

from fastavro import read, write

from ..confluent.type.variant_utils import Variant

__all__ = ["install"]

_KEY = "record-variant"


def _read(data: dict[str, Any], writer_schema: Any, reader_schema: Any = None) -> Variant:
    return Variant(bytes(data["value"]), bytes(data["metadata"]))


def _write(data: Any, schema: Any) -> Any:
    """A Variant (this client's or another's: anything with its bytes) as the record; a record
    given as a dict is written as it is."""
    if hasattr(data, "standalone_value_bytes") and hasattr(data, "metadata"):
        return {"metadata": bytes(data.metadata), "value": bytes(data.standalone_value_bytes())}
    return data


def install() -> None:
    """Give fastavro the variant logical type (again: idempotent)."""
    read.LOGICAL_READERS[_KEY] = _read
    write.LOGICAL_WRITERS[_KEY] = _write
