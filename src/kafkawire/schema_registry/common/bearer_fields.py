"""The bearer field providers' bases and the static ones, by confluent-kafka's names: what the
registry client asks for each request's token, ``target-sr-cluster`` and identity pool. Apart
from auth.py (which builds providers from the configuration) so that schema_registry_client.py,
where confluent-kafka also serves the static ones, can import them without a cycle.
"""

from __future__ import annotations

import abc
from typing import Any

__all__: list[str] = []


class _BearerFieldProvider(abc.ABC):
    """What the registry client asks for each request's bearer fields (confluent-kafka's base of
    its providers, which a program's own provider may derive from)."""

    @abc.abstractmethod
    def get_bearer_fields(self) -> dict[str, Any]:
        raise NotImplementedError


class _AsyncBearerFieldProvider(abc.ABC):
    """`_BearerFieldProvider` for a provider whose fields are awaited."""

    @abc.abstractmethod
    async def get_bearer_fields(self) -> dict[str, Any]:
        raise NotImplementedError


def _static_fields(token: Any, logical_cluster: Any, identity_pool: Any) -> dict[str, Any]:
    fields = {"bearer.auth.token": token, "bearer.auth.logical.cluster": logical_cluster}
    if identity_pool is not None:
        fields["bearer.auth.identity.pool.id"] = identity_pool
    return fields


class _StaticFieldProvider(_BearerFieldProvider):
    """STATIC_TOKEN: a fixed token plus the cluster and identity pool headers (confluent-kafka's
    name and arguments)."""

    def __init__(self, token: str, logical_cluster: str, identity_pool: str | None = None) -> None:
        self.token = token
        self.logical_cluster = logical_cluster
        self.identity_pool = identity_pool

    def get_bearer_fields(self) -> dict[str, Any]:
        return _static_fields(self.token, self.logical_cluster, self.identity_pool)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(logical_cluster={self.logical_cluster!r})"


class _AsyncStaticFieldProvider(_AsyncBearerFieldProvider):
    """`_StaticFieldProvider`'s fields, awaited."""

    def __init__(self, token: str, logical_cluster: str, identity_pool: str | None = None) -> None:
        self.token = token
        self.logical_cluster = logical_cluster
        self.identity_pool = identity_pool

    async def get_bearer_fields(self) -> dict[str, Any]:
        return _static_fields(self.token, self.logical_cluster, self.identity_pool)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(logical_cluster={self.logical_cluster!r})"
