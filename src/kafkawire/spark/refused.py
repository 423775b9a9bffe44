"""A stream reader whose options were refused: it raises the refusal at Spark's first call.

PySpark's streaming source runner makes the reader inside a ``try`` whose ``finally`` calls
``reader.stop()``: an error raised while the reader is made leaves ``reader`` unbound, and the
user sees ``UnboundLocalError`` last, the option's message buried above it. Made without error,
this reader carries the message to the first call, where it reaches the user intact.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NoReturn

from pyspark.sql.datasource import DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import ReadLimit, SupportsTriggerAvailableNow


class RefusedStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    def __init__(self, error: Exception) -> None:
        self.error = error

    def _refuse(self) -> NoReturn:
        raise self.error

    def prepareForTriggerAvailableNow(self) -> None:
        self._refuse()

    def getDefaultReadLimit(self) -> ReadLimit:
        self._refuse()

    def initialOffset(self) -> dict[str, Any]:
        self._refuse()

    def latestOffset(self, start: dict[str, Any], limit: ReadLimit) -> dict[str, Any]:
        self._refuse()

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> list[InputPartition]:
        self._refuse()

    def read(self, partition: InputPartition) -> Iterator[Any]:
        self._refuse()

    def stop(self) -> None:
        """Nothing was opened."""
