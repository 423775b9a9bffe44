"""The admin client's option table: the connection options plus the few the admin client uses.

Same mechanism as the producer's table (`kafkawire.config`): librdkafka's names, unknown keys are
errors, and confluent-kafka's no-op keys (``debug``, ...) are accepted with no effect; ``logger``
is checked here (a Logger, an adapter or a Handler) and used by the client.
"""

from __future__ import annotations

from ..config import CONNECTION_OPTIONS, RETRY_BACKOFF_OPTIONS, Option
from ..producer.config import LOGGER_OPTION, NOOP_OPTIONS

ADMIN_OPTIONS: tuple[Option, ...] = (
    *CONNECTION_OPTIONS,
    *RETRY_BACKOFF_OPTIONS,
    # Callbacks, served by poll(): every broker connection down; a broker's throttle time; statistics.
    Option("error_cb", "callable", None),
    LOGGER_OPTION,  # a Logger (or adapter) or a Handler: where the admin client logs
    Option("throttle_cb", "callable", None),
    Option("stats_cb", "callable", None),
    Option("statistics.interval.ms", "int", 0, 0, 86_400_000),  # 0: no statistics
    *NOOP_OPTIONS,
)
