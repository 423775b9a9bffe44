"""The DEK registry client: KEKs and DEKs kept by a Schema Registry (or in process for mock:// URLs)."""

from . import mock_dek_registry_client  # noqa: F401  (serves mock:// URLs)
