"""Kafka's on-the-wire record formats: RecordBatch v2, legacy MessageSets, codecs, CRCs."""

from typing import TYPE_CHECKING

from .._lazy_names import lazy_names

if TYPE_CHECKING:
    from ..protocol.primitives import DecodeError
    from .batch import (
        HEADER_GAP,
        WIDEST_GAP,
        BatchBuilder,
        build_control_batch,
        record_size_upper_bound,
        record_size_widest,
        with_producer_state,
    )
    from .compression import (
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
    from .crc import crc32, crc32c
    from .decoder import decode_batches, decode_transaction_marker
    from .legacy import encode_message_set
    from .types import (
        CONTROL_ABORT,
        CONTROL_COMMIT,
        CREATE_TIME,
        DEFAULT_DECODE_BUDGET,
        HEADER_SIZE,
        LOG_APPEND_TIME,
        CorruptRecordError,
        DecodeBudget,
        DecodeBudgetError,
        Record,
        RecordBatch,
        TransactionMarker,
    )

# (lazy: a producer does not import the decoders, a consumer not the builders)
__getattr__, __dir__ = lazy_names(
    __name__,
    globals(),
    {
        "..protocol.primitives": "DecodeError",
        ".batch": "HEADER_GAP WIDEST_GAP BatchBuilder build_control_batch record_size_upper_bound record_size_widest with_producer_state",
        ".compression": "DEFAULT_MAX_DECOMPRESSED_SIZE GZIP LZ4 NONE SNAPPY ZSTD DecompressedSizeError compress decompress",
        ".crc": "crc32 crc32c",
        ".decoder": "decode_batches decode_transaction_marker",
        ".legacy": "encode_message_set",
        ".types": "CONTROL_ABORT CONTROL_COMMIT CREATE_TIME DEFAULT_DECODE_BUDGET HEADER_SIZE LOG_APPEND_TIME CorruptRecordError DecodeBudget DecodeBudgetError Record RecordBatch TransactionMarker",
    },
)

__all__ = [
    "CONTROL_ABORT",
    "CONTROL_COMMIT",
    "CREATE_TIME",
    "DEFAULT_DECODE_BUDGET",
    "DEFAULT_MAX_DECOMPRESSED_SIZE",
    "GZIP",
    "HEADER_GAP",
    "HEADER_SIZE",
    "LOG_APPEND_TIME",
    "LZ4",
    "NONE",
    "SNAPPY",
    "WIDEST_GAP",
    "ZSTD",
    "BatchBuilder",
    "CorruptRecordError",
    "DecodeBudget",
    "DecodeBudgetError",
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
    "record_size_widest",
    "with_producer_state",
]
