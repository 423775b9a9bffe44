"""Kafka for PySpark: a data source for Spark 4's Python Data Source API, format ``"kafkawire"``.

Shaped like Spark's own Kafka connector (same columns, same options), but it runs kafkawire inside
the Python workers, so it needs no JVM jar. Importing this package needs the ``spark`` extra.
"""

from kafkawire.spark.source import KafkaDataSource, register

__all__ = ["KafkaDataSource", "register"]
