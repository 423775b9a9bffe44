"""The applications built on the library: the ``kafkawire`` command (cli), the producer
demo, and the confluent_kafka alias behind ``python -m kafkawire.run``. The library never imports
this package; the pipeline (kafkawire.pipeline) and the embedded broker (kafkawire.local_broker),
which the commands run, stand below it."""
