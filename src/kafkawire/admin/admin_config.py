"""The admin client's option table: the connection options plus the few the admin client uses.

Same mechanism as the producer's table (`kafkawire.base.config`): librdkafka's names, unknown keys are
errors, and confluent-kafka's no-op keys (``debug``, ...) are accepted with no effect; ``logger``
is checked here (a Logger, an adapter or a Handler) and used by the client.
"""

from __future__ import annotations

from ..base.config import CONNECTION_OPTIONS, RETRY_BACKOFF_OPTIONS, Option, option_index
from ..client.inert_properties import unimplemented
from ..client.options import ADMIN, CALLBACK_OPTIONS, DEBUG_OPTION, LOGGER_OPTION, NOOP_OPTIONS

ADMIN_OPTIONS: tuple[Option, ...] = (
    *CONNECTION_OPTIONS,
    *RETRY_BACKOFF_OPTIONS,
    # Callbacks, served by poll(): every broker connection down; a broker's throttle time; statistics.
    *CALLBACK_OPTIONS,
    LOGGER_OPTION,  # a Logger (or adapter) or a Handler: where the admin client logs
    DEBUG_OPTION,
    # list_topics(topic) may create an unknown topic, as librdkafka's admin client (a producer
    # handle, so the producer's default: true) does.
    Option("allow.auto.create.topics", "bool", True),
    *NOOP_OPTIONS,
)

ADMIN_OPTIONS += unimplemented(ADMIN_OPTIONS, ADMIN)

ADMIN_INDEX = option_index(ADMIN_OPTIONS)
