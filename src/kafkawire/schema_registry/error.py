"""SchemaRegistryError: an error answer from the registry (HTTP status, its error code, message)."""

from __future__ import annotations

try:  # fastavro's schema errors (an AvroSerializer's bad schema raises them), when fastavro is there
    from fastavro.schema import SchemaParseException, UnknownType
except ImportError:
    pass

__all__ = ["OAuthTokenError", "SchemaParseException", "SchemaRegistryError", "UnknownType"]


class SchemaRegistryError(Exception):
    """The registry refused a request. ``error_code`` is the registry's (e.g. 40401 subject not
    found), -1 when the answer carried none."""

    UNKNOWN = -1

    def __init__(self, http_status_code: int, error_code: int, error_message: str) -> None:
        super().__init__(error_message)
        self.http_status_code = http_status_code
        self.error_code = error_code
        self.error_message = error_message

    def __repr__(self) -> str:
        return f"SchemaRegistryError(http_code={self.http_status_code}, error_code={self.error_code}, error_message={self.error_message})"

    def __str__(self) -> str:
        return f"{self.error_message} (HTTP {self.http_status_code}, registry error code {self.error_code})"


class OAuthTokenError(Exception):
    """The registry's OAuth token could not be fetched (after the client's ``max.retries``)."""

    def __init__(self, message: str, status_code: int | None = None, response_text: str | None = None) -> None:
        self.message = message
        self.status_code = status_code
        self.response_text = response_text
        super().__init__(f"{message} (HTTP {status_code}): {response_text}")
