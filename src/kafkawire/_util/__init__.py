"""confluent-kafka's ``_util`` helpers at its module path: the admin values' argument checks
(`ConversionUtil`, `ValidationUtil`), ``asyncinit`` for classes built with ``await``, and
librdkafka's ``key=value`` list parsing."""

from .conversion_util import ConversionUtil
from .validation_util import ValidationUtil

__all__ = ["ConversionUtil", "ValidationUtil"]
