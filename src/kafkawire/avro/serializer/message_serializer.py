"""confluent_kafka.avro.serializer.message_serializer: the legacy API's Schema Registry framing.

A payload is the magic byte 0, the schema id (4 bytes, big-endian) and the record in Avro binary.
Records are written and read with fastavro; a payload fastavro cannot read the first time a schema
id is seen is read with the ``avro`` library from then on for that id, as confluent-kafka does
(the reader is chosen once per id and kept).
"""

from __future__ import annotations

import io
import json
import logging
import struct
import sys
import traceback
from collections.abc import Callable
from typing import Any, BinaryIO

import avro.io
from fastavro import schemaless_reader, schemaless_writer
from fastavro.schema import parse_schema

from ..error import ClientError
from . import KeySerializerError, SerializerError, ValueSerializerError

__all__ = ["HAS_FAST", "MAGIC_BYTE", "ContextStringIO", "MessageSerializer"]

log = logging.getLogger(__name__)

MAGIC_BYTE = 0
HAS_FAST = True  # confluent-kafka's flag for "fastavro is there": kafkawire always writes with it

_HEADER = struct.Struct(">bI")


class ContextStringIO(io.BytesIO):
    """confluent-kafka's name for the buffer a payload is written into and read from (a BytesIO,
    closed at the end of a ``with`` block)."""


def _fastavro(schema: Any) -> Any:
    return parse_schema(json.loads(str(schema)))


class MessageSerializer:
    """Encodes records for, and decodes payloads from, topics whose schemas live in the registry.

    ``registry_client`` is a `CachedSchemaRegistryClient` (or anything with its ``register``,
    ``check_registration``, ``get_by_id`` and ``auto_register_schemas``); the reader schemas, when
    given, are what decoded keys and values are resolved into.
    """

    def __init__(self, registry_client: Any, reader_key_schema: Any = None, reader_value_schema: Any = None) -> None:
        self.registry_client = registry_client
        self.id_to_decoder_func: dict[int, Callable[[BinaryIO], Any]] = {}
        self.id_to_writers: dict[int, Callable[[Any, BinaryIO], Any]] = {}
        self.reader_key_schema = reader_key_schema
        self.reader_value_schema = reader_value_schema

    def _get_encoder_func(self, writer_schema: Any) -> Callable[[Any, BinaryIO], Any]:
        parsed = _fastavro(writer_schema)
        return lambda record, fp: schemaless_writer(fp, parsed, record)

    def encode_record_with_schema(self, topic: str, schema: Any, record: Any, is_key: bool = False) -> bytes:
        """``record`` framed under ``schema``'s id in subject ``<topic>-key`` or ``<topic>-value``
        (registered there, or only looked up when the client does not register automatically)."""
        error = KeySerializerError if is_key else ValueSerializerError
        subject = topic + ("-key" if is_key else "-value")
        if self.registry_client.auto_register_schemas:
            schema_id = self.registry_client.register(subject, schema)
        else:
            schema_id = self.registry_client.check_registration(subject, schema)
        if not schema_id:
            raise error(f"Unable to retrieve schema id for subject {subject}")
        if schema_id not in self.id_to_writers:
            self.id_to_writers[schema_id] = self._get_encoder_func(schema)
        return self.encode_record_with_schema_id(schema_id, record, is_key=is_key)

    def encode_record_with_schema_id(self, schema_id: int, record: Any, is_key: bool = False) -> bytes:
        """``record`` framed under the registry's schema ``schema_id``."""
        error = KeySerializerError if is_key else ValueSerializerError
        if schema_id not in self.id_to_writers:
            try:
                schema = self.registry_client.get_by_id(schema_id)
                if not schema:
                    raise error("Schema does not exist")
                self.id_to_writers[schema_id] = self._get_encoder_func(schema)
            except ClientError:
                # the text confluent-kafka gives: the client's error with its traceback
                raise error(repr(traceback.format_exception(*sys.exc_info()))) from None
        with ContextStringIO() as out:
            out.write(_HEADER.pack(MAGIC_BYTE, schema_id))
            self.id_to_writers[schema_id](record, out)
            return out.getvalue()

    def _get_decoder_func(self, schema_id: int, payload: BinaryIO, is_key: bool = False) -> Callable[[BinaryIO], Any]:
        decoder = self.id_to_decoder_func.get(schema_id)
        if decoder is not None:
            return decoder
        try:
            writer_schema = self.registry_client.get_by_id(schema_id)
        except ClientError as e:
            raise SerializerError(f"unable to fetch schema with id {schema_id}: {e}") from e
        if writer_schema is None:
            raise SerializerError(f"unable to fetch schema with id {schema_id}")
        reader_schema = self.reader_key_schema if is_key else self.reader_value_schema
        start = payload.tell()
        try:
            writer = _fastavro(writer_schema)
            reader = _fastavro(reader_schema) if reader_schema is not None else None
            schemaless_reader(payload, writer)  # a trial read: does fastavro read this payload?
            decoder = lambda p: schemaless_reader(p, writer, reader)  # noqa: E731
        except Exception:
            log.warning("Fast avro failed for schema with id %d, falling thru to standard avro", schema_id)
            datum_reader = avro.io.DatumReader(writer_schema, reader_schema)
            decoder = lambda p: datum_reader.read(avro.io.BinaryDecoder(p))  # noqa: E731
        payload.seek(start)
        self.id_to_decoder_func[schema_id] = decoder
        return decoder

    def decode_message(self, message: bytes | None, is_key: bool = False) -> Any:
        """The record framed in ``message`` (None for None), resolved into the reader schema if one was given."""
        if message is None:
            return None
        if len(message) <= 5:
            raise SerializerError("message is too small to decode")
        with ContextStringIO(message) as payload:
            magic, schema_id = _HEADER.unpack(payload.read(5))
            if magic != MAGIC_BYTE:
                raise SerializerError("message does not start with magic byte")
            return self._get_decoder_func(schema_id, payload, is_key)(payload)
