"""confluent_kafka.avro.error: the legacy Schema Registry client's error."""

from __future__ import annotations

__all__ = ["ClientError"]


class ClientError(Exception):
    """A Schema Registry request or a schema the legacy client could not use; ``message`` says which,
    ``http_code`` the registry's status when one answered."""

    def __init__(self, message: str, http_code: int | None = None) -> None:
        self.message = message
        self.http_code = http_code
        super().__init__(message)

    def __repr__(self) -> str:
        return f"ClientError(error={self.message})"

    def __str__(self) -> str:
        return self.message
