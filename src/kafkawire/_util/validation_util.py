"""`ValidationUtil`: the admin values' attribute checks, with confluent-kafka's error texts."""

from __future__ import annotations

from typing import Any

from ..core.kafka_error import KafkaError

__all__ = ["KafkaError", "ValidationUtil"]


class ValidationUtil:
    @staticmethod
    def check_multiple_not_none(obj: Any, vars_to_check: list[str]) -> None:
        for param in vars_to_check:
            ValidationUtil.check_not_none(obj, param)

    @staticmethod
    def check_not_none(obj: Any, param: str) -> None:
        if getattr(obj, param) is None:
            raise ValueError(f"Expected {param} to be not None")

    @staticmethod
    def check_multiple_is_string(obj: Any, vars_to_check: list[str]) -> None:
        for param in vars_to_check:
            ValidationUtil.check_is_string(obj, param)

    @staticmethod
    def check_is_string(obj: Any, param: str) -> None:
        """None passes: only a value that is there must be a str."""
        value = getattr(obj, param)
        if value is not None and not isinstance(value, str):
            raise TypeError(f"Expected {param} to be a string")

    @staticmethod
    def check_kafka_errors(errors: Any) -> None:
        if not isinstance(errors, list):
            raise TypeError("errors should be None or a list")
        for error in errors:
            if not isinstance(error, KafkaError):
                raise TypeError("Expected list of KafkaError")

    @staticmethod
    def check_kafka_error(error: Any) -> None:
        if not isinstance(error, KafkaError):
            raise TypeError("Expected error to be a KafkaError")
