"""The data source Spark sees: a name and four factories, each delegating to its module.

Spark pickles this class to its Python workers, so it stays small; the writers and readers are
imported where they run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql.datasource import DataSource

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.datasource import (
        DataSourceReader,
        DataSourceStreamReader,
        DataSourceStreamWriter,
        DataSourceWriter,
    )
    from pyspark.sql.types import StructType

SOURCE_NAME = "kafkawire"


class KafkaDataSource(DataSource):
    """``spark.read/readStream/write/writeStream.format("kafkawire")``."""

    @classmethod
    def name(cls) -> str:
        return SOURCE_NAME

    def schema(self) -> StructType | str:
        from kafkawire.spark.reader import read_schema

        return read_schema(self.options)

    def reader(self, schema: StructType) -> DataSourceReader:
        from kafkawire.spark.reader import batch_reader

        return batch_reader(schema, self.options)

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        from kafkawire.spark.reader import stream_reader
        from kafkawire.spark.refused import RefusedStreamReader

        try:
            return stream_reader(schema, self.options)
        except ValueError as exc:  # raised here, PySpark would bury it under an UnboundLocalError
            return RefusedStreamReader(exc)

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        from kafkawire.spark.writer import batch_writer

        return batch_writer(schema, self.options, overwrite)

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:
        from kafkawire.spark.writer import stream_writer

        return stream_writer(schema, self.options, overwrite)


def register(spark: SparkSession) -> None:
    """Make ``format("kafkawire")`` available in this session (Spark refuses the name ``kafka``)."""
    spark.dataSource.register(KafkaDataSource)
