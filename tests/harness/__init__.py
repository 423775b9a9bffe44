"""Test harness: librdkafka's mock cluster and a confluent-kafka "judge".

The real broker used by the tests is :class:`kafkawire.local_broker.TansuBroker`.
"""
