"""SchemaRegistryClient: the Schema Registry REST API over httpx, with caches and retries.

Ids, guids and registrations never change once the registry gave them, so they are cached for
good (LRU, ``cache.capacity``); "latest" answers are cached for ``cache.latest.ttl.sec`` (forever
when unset, until ``clear_latest_caches()``). A request is retried on 408/429/5xx and network
errors with full-jitter exponential backoff (``max.retries``, ``retries.wait.ms``,
``retries.max.wait.ms``), then the next URL of ``url`` is tried.
"""

from __future__ import annotations

import threading
import time
import urllib.parse
from typing import Any

import httpx
from cachetools import LRUCache, TTLCache

from ..._version import version as version
from ..common.auth import _CustomOAuthClient as _CustomOAuthClient
from ..common.auth import _OAuthClient as _OAuthClient
from ..common.auth import bearer_headers
from ..common.rest import RestConfig, error_from_response, parse_rest_config
from ..common.schema_cache import _SchemaCache
from ..common.schema_registry_client import (
    Association,
    AssociationCreateOrUpdateRequest,
    AssociationResponse,
    RegisteredSchema,
    Schema,
    SchemaVersion,
    ServerConfig,
    full_jitter,
    is_retriable,
    is_success,
)
from ..error import OAuthTokenError as OAuthTokenError
from ..error import SchemaRegistryError as SchemaRegistryError

__all__ = ["SchemaRegistryClient"]

ACCEPT = "application/vnd.schemaregistry.v1+json, application/vnd.schemaregistry+json, application/json"


def _urlencode(value: str) -> str:
    """A subject or name as one path segment (``/`` escaped too), as the registry's URLs take it."""
    return urllib.parse.quote(value, safe="")


def _page(offset: int, limit: int) -> dict[str, Any]:
    return {"offset": offset, "limit": limit}


def _params(query: Any) -> list[tuple[str, Any]]:
    """httpx query parameters; booleans as the registry spells them; a list of pairs may repeat names."""
    pairs = query if isinstance(query, list) else list((query or {}).items())
    return [(k, str(v).lower() if isinstance(v, bool) else v) for k, v in pairs if v is not None]


class _BaseRestClient:
    """The registry configuration parsed (common/rest.py), under confluent-kafka's attribute names;
    `_RestClient` sends with it. Where the parse differs on purpose (README: URLs that are not
    http(s), counts that are not ints, the URL's password kept out of ``base_urls``) the
    configuration is refused at construction, naming the key."""

    def __init__(self, conf: dict[str, Any], _parsed: RestConfig | None = None) -> None:
        cfg = parse_rest_config(dict(conf)) if _parsed is None else _parsed
        self.config = cfg
        self.base_urls = cfg.base_urls
        self.verify = cfg.verify
        self.auth = cfg.auth
        self.proxy = cfg.proxy
        self.timeout = cfg.timeout
        self.cache_capacity = cfg.cache_capacity
        self.cache_latest_ttl_sec = cfg.cache_latest_ttl_sec
        self.max_retries = cfg.max_retries
        self.retries_wait_ms = cfg.retries_wait_ms
        self.retries_max_wait_ms = cfg.retries_max_wait_ms
        self.bearer_auth_credentials_source = None if cfg.bearer is None else conf["bearer.auth.credentials.source"]
        self.bearer_field_provider = cfg.bearer

    def get(self, url: str, query: Any = None) -> Any:
        raise NotImplementedError()

    def post(self, url: str, body: Any, query: Any = None) -> Any:
        raise NotImplementedError()

    def put(self, url: str, body: Any = None, query: Any = None) -> Any:
        raise NotImplementedError()

    def delete(self, url: str, query: Any = None) -> Any:
        raise NotImplementedError()


class _RestClient(_BaseRestClient):
    """One httpx session over the configured URLs; ``send_request`` returns the decoded JSON."""

    def __init__(self, conf: dict[str, Any], _parsed: RestConfig | None = None) -> None:
        """(``_parsed``: the configuration a caller parsed already, `_AsyncRestClient`'s.)"""
        super().__init__(conf, _parsed)
        cfg = self.config
        self.session = httpx.Client(
            verify=cfg.verify,
            timeout=cfg.timeout,
            proxy=cfg.proxy,
            auth=httpx.BasicAuth(*cfg.auth) if cfg.auth is not None else None,
        )

    def close(self) -> None:
        self.session.close()

    def handle_bearer_auth(self, headers: dict[str, str]) -> None:
        """Add the bearer provider's fields to ``headers`` (confluent-kafka's method)."""
        if self.bearer_field_provider is None:
            raise ValueError("Bearer field provider is not set")  # confluent-kafka's words
        headers.update(bearer_headers(self.bearer_field_provider))

    def get(self, url: str, query: Any = None) -> Any:
        return self.send_request(url, "GET", query=query)

    def post(self, url: str, body: Any, query: Any = None) -> Any:
        return self.send_request(url, "POST", body, query)

    def put(self, url: str, body: Any = None, query: Any = None) -> Any:
        return self.send_request(url, "PUT", body, query)

    def delete(self, url: str, query: Any = None) -> Any:
        return self.send_request(url, "DELETE", query=query)

    def send_request(self, url: str, method: str, body: Any = None, query: Any = None) -> Any:
        headers = {"Accept": ACCEPT}
        if body is not None:
            headers["Content-Type"] = "application/vnd.schemaregistry.v1+json"
        if self.bearer_field_provider is not None:
            self.handle_bearer_auth(headers)
        params = _params(query)
        last: Exception | None = None
        for i, base in enumerate(self.base_urls):
            try:
                response = self._send_with_retries(f"{base}/{url.lstrip('/')}", method, headers, body, params)
            except httpx.TransportError as e:
                last = e
                continue
            if is_retriable(response.status_code) and i + 1 < len(self.base_urls):
                continue
            if is_success(response.status_code):
                return response.json() if response.content else None
            raise error_from_response(response.status_code, response.content)
        assert last is not None
        raise last

    def _send_with_retries(
        self, url: str, method: str, headers: dict[str, str], body: Any, params: list[tuple[str, Any]]
    ) -> httpx.Response:
        attempt = 0
        while True:
            try:
                response = self.session.request(method=method, url=url, headers=headers, json=body, params=params)
            except httpx.TransportError:
                if attempt >= self.max_retries:
                    raise
            else:
                if not is_retriable(response.status_code) or attempt >= self.max_retries:
                    return response
            time.sleep(full_jitter(self.retries_wait_ms, self.retries_max_wait_ms, attempt) / 1000)
            attempt += 1


def _path(prefix: str, subject_name: str | None) -> str:
    return prefix if subject_name is None else f"{prefix}/{_urlencode(subject_name)}"


# URL schemes served in-process ("mock"), filled in by the modules serving them (imported by the
# package), so this module does not import them back.
IN_PROCESS: dict[str, type[SchemaRegistryClient]] = {}


class SchemaRegistryClient:
    """A Confluent Schema Registry client (confluent_kafka.schema_registry's API).

    ``SchemaRegistryClient.new_client({"url": "mock://..."})`` gives the in-process registry
    (kafkawire.schema_registry.mock_schema_registry_client) for unit tests.
    """

    def __init__(self, conf: dict[str, Any]) -> None:
        self._conf = dict(conf)
        self._rest_client = _RestClient(conf)
        capacity = self._rest_client.config.cache_capacity
        ttl = self._rest_client.config.cache_latest_ttl_sec
        self._lock = threading.RLock()
        self._cache = _SchemaCache(capacity)
        self._latest: Any = TTLCache(capacity, ttl) if ttl else LRUCache(capacity)
        self._latest_meta: Any = TTLCache(capacity, ttl) if ttl else LRUCache(capacity)

    @staticmethod
    def new_client(conf: dict[str, Any]) -> SchemaRegistryClient:
        """A client for ``conf``; a ``mock://`` url gives the in-process registry."""
        url = conf.get("url")
        scheme = url.split("://", 1)[0] if isinstance(url, str) and "://" in url else ""
        return IN_PROCESS.get(scheme, SchemaRegistryClient)(conf)

    def __enter__(self) -> SchemaRegistryClient:
        return self

    def __exit__(self, *args: Any) -> None:
        self.close()

    def close(self) -> None:
        self._rest_client.close()

    def config(self) -> dict[str, Any]:
        return self._conf

    # --- schemas -------------------------------------------------------------------------------

    def register_schema(self, subject_name: str, schema: Schema, normalize_schemas: bool = False) -> int:
        """Registers ``schema`` under ``subject_name`` (or finds it there); returns its id."""
        registered = self.register_schema_full_response(subject_name, schema, normalize_schemas)
        assert registered.schema_id is not None
        return registered.schema_id

    def register_schema_full_response(
        self, subject_name: str, schema: Schema, normalize_schemas: bool = False
    ) -> RegisteredSchema:
        hit = self._cache.get_registered_by_subject_schema(subject_name, schema, normalize_schemas)
        if hit is not None:
            return hit
        answer = self._rest_client.post(
            f"subjects/{_urlencode(subject_name)}/versions", schema.to_dict(), {"normalize": normalize_schemas}
        )
        reply = RegisteredSchema.from_dict(answer)
        # Older registries answer with the id only: the registered schema is then the one sent.
        registered = RegisteredSchema(
            subject=reply.subject or subject_name,
            version=reply.version,
            schema_id=reply.schema_id,
            guid=reply.guid,
            schema=reply.schema if reply.schema.schema_str is not None else schema,
        )
        self._cache.set_registered_schema(schema, registered, subject_name, normalize_schemas)
        return registered

    def get_schema(
        self,
        schema_id: int,
        subject_name: str | None = None,
        fmt: str | None = None,
        reference_format: str | None = None,
    ) -> Schema:
        """The schema of ``schema_id`` (as registered under ``subject_name``, in ``fmt``, its
        references in ``reference_format``: format names depend on the schema type)."""
        hit = self._cache.get_schema_by_id(subject_name, schema_id)
        if hit is not None:
            return hit[1]
        query = {"subject": subject_name, "format": fmt, "reference_format": reference_format}
        answer = self._rest_client.get(f"schemas/ids/{schema_id}", query)
        schema = Schema.from_dict(answer)
        self._cache.set_schema(subject_name, schema_id, answer.get("guid"), schema)
        return schema

    def get_schema_by_guid(self, guid: str, fmt: str | None = None) -> Schema:
        hit = self._cache.get_schema_by_guid(guid)
        if hit is not None:
            return hit
        schema = Schema.from_dict(self._rest_client.get(f"schemas/guids/{_urlencode(guid)}", {"format": fmt}))
        self._cache.set_schema(None, None, guid, schema)
        return schema

    def get_schema_types(self) -> list[str]:
        result: list[str] = self._rest_client.get("schemas/types")
        return result

    def get_subjects_by_schema_id(
        self, schema_id: int, subject_name: str | None = None, deleted: bool = False, offset: int = 0, limit: int = -1
    ) -> list[str]:
        query = {"subject": subject_name, "deleted": deleted, **_page(offset, limit)}
        result: list[str] = self._rest_client.get(f"schemas/ids/{schema_id}/subjects", query)
        return result

    def get_schema_versions(
        self, schema_id: int, subject_name: str | None = None, deleted: bool = False, offset: int = 0, limit: int = -1
    ) -> list[SchemaVersion]:
        query = {"subject": subject_name, "deleted": deleted, **_page(offset, limit)}
        answer = self._rest_client.get(f"schemas/ids/{schema_id}/versions", query)
        return [SchemaVersion.from_dict(v) for v in answer]

    def lookup_schema(
        self, subject_name: str, schema: Schema, normalize_schemas: bool = False, deleted: bool = False
    ) -> RegisteredSchema:
        """The registration of ``schema`` under ``subject_name`` (40403 when it is not there)."""
        hit = self._cache.get_registered_by_subject_schema(subject_name, schema, normalize_schemas)
        if hit is not None and hit.version is not None:
            return hit
        answer = self._rest_client.post(
            f"subjects/{_urlencode(subject_name)}",
            schema.to_dict(),
            {"normalize": normalize_schemas, "deleted": deleted},
        )
        registered = RegisteredSchema.from_dict(answer)
        self._cache.set_registered_schema(schema, registered, subject_name, normalize_schemas)
        return registered

    # --- subjects and versions ------------------------------------------------------------------

    def get_subjects(
        self,
        subject_prefix: str | None = None,
        deleted: bool = False,
        deleted_only: bool = False,
        offset: int = 0,
        limit: int = -1,
    ) -> list[str]:
        query = {
            "subjectPrefix": subject_prefix,
            "deleted": deleted,
            "deletedOnly": deleted_only,
            **_page(offset, limit),
        }
        result: list[str] = self._rest_client.get("subjects", query)
        return result

    def delete_subject(self, subject_name: str, permanent: bool = False) -> list[int]:
        """Soft-deletes the subject (then, with ``permanent``, hard-deletes it); returns its versions."""
        versions: list[int] = self._rest_client.delete(f"subjects/{_urlencode(subject_name)}")
        if permanent:
            versions = self._rest_client.delete(f"subjects/{_urlencode(subject_name)}", {"permanent": True})
        self._forget(subject_name)
        return versions

    def _forget(self, subject_name: str, version: int | None = None) -> None:
        if version is None:
            self._cache.remove_by_subject(subject_name)
        else:
            self._cache.remove_by_subject_version(subject_name, version)
        with self._lock:
            self._latest.pop(subject_name, None)
            for key in [k for k in self._latest_meta if k[0] == subject_name]:
                del self._latest_meta[key]

    def get_latest_version(self, subject_name: str, fmt: str | None = None) -> RegisteredSchema:
        with self._lock:
            hit: RegisteredSchema | None = self._latest.get(subject_name)
        if hit is not None:
            return hit
        answer = self._rest_client.get(f"subjects/{_urlencode(subject_name)}/versions/latest", {"format": fmt})
        registered = RegisteredSchema.from_dict(answer)
        with self._lock:
            self._latest[subject_name] = registered
        return registered

    def get_latest_with_metadata(
        self, subject_name: str, metadata: dict[str, str], deleted: bool = False, fmt: str | None = None
    ) -> RegisteredSchema:
        """The latest version whose metadata properties include every ``metadata`` key/value."""
        key = (subject_name, frozenset(metadata.items()), deleted)
        with self._lock:
            hit: RegisteredSchema | None = self._latest_meta.get(key)
        if hit is not None:
            return hit
        query: list[tuple[str, Any]] = [("deleted", deleted), ("format", fmt)]
        for k, v in metadata.items():
            query += [("key", k), ("value", v)]
        registered = RegisteredSchema.from_dict(
            self._rest_client.get(f"subjects/{_urlencode(subject_name)}/metadata", query)
        )
        with self._lock:
            self._latest_meta[key] = registered
        return registered

    def get_version(
        self, subject_name: str, version: int | str = "latest", deleted: bool = False, fmt: str | None = None
    ) -> RegisteredSchema:
        if version == "latest":
            return self.get_latest_version(subject_name, fmt)
        hit = self._cache.get_registered_by_subject_version(subject_name, int(version))
        if hit is not None:
            return hit
        answer = self._rest_client.get(
            f"subjects/{_urlencode(subject_name)}/versions/{version}", {"deleted": deleted, "format": fmt}
        )
        registered = RegisteredSchema.from_dict(answer)
        self._cache.set_registered_schema(registered.schema, registered, subject_name)
        return registered

    def get_referenced_by(self, subject_name: str, version: int | str, offset: int = 0, limit: int = -1) -> list[int]:
        path = f"subjects/{_urlencode(subject_name)}/versions/{version}/referencedby"
        result: list[int] = self._rest_client.get(path, _page(offset, limit))
        return result

    def get_versions(
        self, subject_name: str, deleted: bool = False, deleted_only: bool = False, offset: int = 0, limit: int = -1
    ) -> list[int]:
        query = {"deleted": deleted, "deletedOnly": deleted_only, **_page(offset, limit)}
        result: list[int] = self._rest_client.get(f"subjects/{_urlencode(subject_name)}/versions", query)
        return result

    def delete_version(self, subject_name: str, version: int, permanent: bool = False) -> int:
        path = f"subjects/{_urlencode(subject_name)}/versions/{version}"
        result: int = self._rest_client.delete(path)
        if permanent:
            result = self._rest_client.delete(path, {"permanent": True})
        self._forget(subject_name, version)
        return result

    # --- compatibility, config, mode, contexts ------------------------------------------------

    def set_compatibility(self, subject_name: str | None = None, level: str | None = None) -> dict[str, Any]:
        if level is None:
            raise ValueError("set_compatibility needs a level; level is None")
        result: dict[str, Any] = self._rest_client.put(_path("config", subject_name), {"compatibility": level.upper()})
        return result

    def get_compatibility(self, subject_name: str | None = None) -> str:
        query = {"defaultToGlobal": True} if subject_name is not None else None
        answer = self._rest_client.get(_path("config", subject_name), query)
        return str(answer.get("compatibilityLevel") or answer.get("compatibility"))

    def test_compatibility(self, subject_name: str, schema: Schema, version: int | str = "latest") -> bool:
        path = f"compatibility/subjects/{_urlencode(subject_name)}/versions/{version}"
        return bool(self._rest_client.post(path, schema.to_dict())["is_compatible"])

    def test_compatibility_all_versions(self, subject_name: str, schema: Schema) -> bool:
        path = f"compatibility/subjects/{_urlencode(subject_name)}/versions"
        return bool(self._rest_client.post(path, schema.to_dict())["is_compatible"])

    def set_config(self, subject_name: str | None = None, config: ServerConfig | None = None) -> ServerConfig:
        if config is None:
            raise ValueError("set_config needs a ServerConfig; config is None")
        return ServerConfig.from_dict(self._rest_client.put(_path("config", subject_name), config.to_dict()))

    def delete_config(self, subject_name: str | None = None) -> ServerConfig:
        return ServerConfig.from_dict(self._rest_client.delete(_path("config", subject_name)))

    def get_config(self, subject_name: str | None = None) -> ServerConfig:
        return ServerConfig.from_dict(self._rest_client.get(_path("config", subject_name)))

    def get_global_mode(self) -> str:
        return str(self._rest_client.get("mode")["mode"])

    def update_global_mode(self, mode: str, force: bool = False) -> str:
        return str(self._rest_client.put("mode", {"mode": mode}, {"force": force})["mode"])

    def get_mode(self, subject_name: str) -> str:
        return str(self._rest_client.get(_path("mode", subject_name))["mode"])

    def update_mode(self, subject_name: str, mode: str, force: bool = False) -> str:
        return str(self._rest_client.put(_path("mode", subject_name), {"mode": mode}, {"force": force})["mode"])

    def delete_mode(self, subject_name: str) -> str:
        return str(self._rest_client.delete(_path("mode", subject_name))["mode"])

    def get_contexts(self, offset: int = 0, limit: int = -1) -> list[str]:
        result: list[str] = self._rest_client.get("contexts", _page(offset, limit))
        return result

    # --- associations (a subject bound to a topic) -----------------------------------------------

    def get_associations_by_resource_name(
        self,
        resource_name: str,
        resource_namespace: str,
        resource_type: str | None = None,
        association_types: list[str] | None = None,
        offset: int = 0,
        limit: int = -1,
        lifecycle: str | None = None,
    ) -> list[Association]:
        """The subjects associated with a resource: a topic, in its Kafka cluster's namespace
        ("-": any cluster's); optionally only key or value ones, of one lifecycle (STRONG, WEAK)."""
        query: list[tuple[str, Any]] = [("resourceType", resource_type), ("lifecycle", lifecycle)]
        query += [("associationType", t) for t in association_types or []]
        # paging only when asked for, as confluent-kafka sends it (the serdes' look-up never is)
        query += [("offset", offset if offset > 0 else None), ("limit", limit if limit >= 1 else None)]
        path = f"associations/resources/{_urlencode(resource_namespace)}/{_urlencode(resource_name)}"
        return [Association.from_dict(a) for a in self._rest_client.get(path, query) or []]

    def create_association(self, request: AssociationCreateOrUpdateRequest) -> AssociationResponse:
        """Associates subjects with a resource, registering the schemas the request carries."""
        return AssociationResponse.from_dict(self._rest_client.post("associations", request.to_dict()))

    def delete_associations(
        self,
        resource_id: str,
        resource_type: str | None = None,
        association_types: list[str] | None = None,
        cascade_lifecycle: bool = False,
    ) -> None:
        """Removes a resource's associations (only those of ``association_types``, when given);
        ``cascade_lifecycle`` also deletes the subjects of its STRONG ones, and frozen ones need it."""
        query: list[tuple[str, Any]] = [("cascadeLifecycle", cascade_lifecycle), ("resourceType", resource_type)]
        query += [("associationType", t) for t in association_types or []]
        self._rest_client.delete(f"associations/resources/{_urlencode(resource_id)}", query)

    # --- caches ---------------------------------------------------------------------------------

    def clear_latest_caches(self) -> None:
        with self._lock:
            self._latest.clear()
            self._latest_meta.clear()

    def clear_caches(self) -> None:
        self._cache.clear()
        self.clear_latest_caches()
