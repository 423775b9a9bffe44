"""``kafkawire pipeline``: a dataset read with Spark, written to a Kafka topic through the kafkawire
data source, and checked on the broker. Importing this package does not import PySpark; running a
job needs the ``spark`` extra (and, without ``--bootstrap-servers``, the ``local`` one)."""

from kafkawire.pipeline.job import PipelineOptions, run
from kafkawire.pipeline.sample import sample_path
from kafkawire.pipeline.session import PipelineError
from kafkawire.pipeline.summary import PipelineSummary

__all__ = ["PipelineError", "PipelineOptions", "PipelineSummary", "run", "sample_path"]
