"""Kafka's on-the-wire record formats: RecordBatch v2, legacy MessageSets, codecs, CRCs."""

from kafkawire.protocol.primitives import DecodeError
from kafkawire.records.batch import (
    CONTROL_ABORT,
    CONTROL_COMMIT,
    CREATE_TIME,
    HEADER_SIZE,
    LOG_APPEND_TIME,
    BatchBuilder,
    CorruptRecordError,
    Record,
    RecordBatch,
    TransactionMarker,
    build_control_batch,
    decode_batches,
    decode_transaction_marker,
    record_size_upper_bound,
    with_producer_state,
)
from kafkawire.records.compression import (
    DEFAULT_MAX_DECOMPRESSED_SIZE,
    GZIP,
    LZ4,
    NONE,
    SNAPPY,
    ZSTD,
    DecompressedSizeError,
    compress,
    decompress,
)
from kafkawire.records.crc import crc32, crc32c
from kafkawire.records.legacy import encode_message_set

__all__ = [
    "CONTROL_ABORT",
    "CONTROL_COMMIT",
    "CREATE_TIME",
    "DEFAULT_MAX_DECOMPRESSED_SIZE",
    "GZIP",
    "HEADER_SIZE",
    "LOG_APPEND_TIME",
    "LZ4",
    "NONE",
    "SNAPPY",
    "ZSTD",
    "BatchBuilder",
    "CorruptRecordError",
    "DecodeError",
    "DecompressedSizeError",
    "Record",
    "RecordBatch",
    "TransactionMarker",
    "build_control_batch",
    "compress",
    "crc32",
    "crc32c",
    "decode_batches",
    "decode_transaction_marker",
    "decompress",
    "encode_message_set",
    "record_size_upper_bound",
    "with_producer_state",
]
