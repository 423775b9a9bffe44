"""The admin client's option table: the connection options plus the few the admin client uses.

Same mechanism as the producer's table (`kafkawire.config`): librdkafka's names, unknown keys are
errors, and confluent-kafka's no-op keys (``logger``, ``debug``, ...) are accepted with no effect.
"""

from __future__ import annotations

from ..config import CONNECTION_OPTIONS, Option
from ..producer.config import LOGGER_OPTION, NOOP_OPTIONS

ADMIN_OPTIONS: tuple[Option, ...] = (
    *CONNECTION_OPTIONS,
    Option("retry.backoff.ms", "int", 100, 1, 300_000),
    Option("retry.backoff.max.ms", "int", 1000, 1, 300_000),
    # Told (on the IO thread) when every broker connection is down.
    Option("error_cb", "callable", None),
    LOGGER_OPTION,  # accepted; the admin client logs to the 'kafkawire' logger
    *NOOP_OPTIONS,
)
