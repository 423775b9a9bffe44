"""confluent_kafka.avro.cached_schema_registry_client: the legacy API's Schema Registry client.

Its contract is confluent-kafka's, which programs on the legacy API and their tests lean on: the
configuration dict is consumed (keys are popped as they are read, what is left is refused), lookups
answer ``None`` or ``(None, None, None)`` where the registry says no, and registrations raise
`ClientError`. Schemas are ``avro`` library objects (`loads`), cached by id and, per subject, their
ids and versions (``id_to_schema``, ``subject_to_schema_ids``, ``subject_to_schema_versions``).
Requests go through ``_send_request`` (one place, that tests patch), over httpx.
"""

from __future__ import annotations

import json
import logging
import os
import ssl
import urllib.parse
import warnings
from collections import defaultdict
from typing import Any

import httpx

from .error import ClientError
from .load import loads

__all__ = [
    "ACCEPT_HDR",
    "VALID_AUTH_PROVIDERS",
    "VALID_LEVELS",
    "VALID_METHODS",
    "CachedSchemaRegistryClient",
    "ClientError",
]

VALID_LEVELS = ["NONE", "FULL", "FORWARD", "BACKWARD"]
VALID_METHODS = ["GET", "POST", "PUT", "DELETE"]
VALID_AUTH_PROVIDERS = ["URL", "USER_INFO", "SASL_INHERIT"]

ACCEPT_HDR = "application/vnd.schemaregistry.v1+json, application/vnd.schemaregistry+json, application/json"
CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"

log = logging.getLogger(__name__)


def _url_credentials(url: str) -> tuple[str, str]:
    """The user and password written in ``url`` (percent-decoded), or two empty strings."""
    parts = urllib.parse.urlsplit(url)
    if parts.username is None:
        return "", ""
    return urllib.parse.unquote(parts.username), urllib.parse.unquote(parts.password or "")


def _without_credentials(url: str) -> str:
    """``url`` without its userinfo and fragment: the address requests go to."""
    parts = urllib.parse.urlsplit(url)
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc.rsplit("@", 1)[-1], parts.path, parts.query, ""))


def _basic_auth(url: str, conf: dict[str, Any]) -> tuple[str, ...]:
    source = conf.pop("basic.auth.credentials.source", "URL").upper()
    if source not in VALID_AUTH_PROVIDERS:
        # same text as confluent-kafka: programs match on it
        raise ValueError(f"schema.registry.basic.auth.credentials.source must be one of {VALID_AUTH_PROVIDERS}")
    if source == "SASL_INHERIT":
        if conf.pop("sasl.mechanism", "").upper() == "GSSAPI":
            # same text as confluent-kafka: programs match on it
            raise ValueError("SASL_INHERIT does not support SASL mechanism GSSAPI")
        return conf.pop("sasl.username", ""), conf.pop("sasl.password", "")
    if source == "USER_INFO":
        credentials = tuple(conf.pop("basic.auth.user.info", "").split(":"))
        if len(credentials) != 2:
            raise ValueError("schema.registry.basic.auth.user.info must be {username}:{password}")
        return credentials
    return _url_credentials(url)


def _tls(
    ca_location: str | None, cert_location: str | None, key_location: str | None, key_password: str | None
) -> ssl.SSLContext | bool:
    """What verifies the registry and presents our certificate: read now, so a wrong path fails here."""
    if ca_location is None and cert_location is None:
        return True
    try:
        in_dir = ca_location is not None and os.path.isdir(ca_location)
        context = ssl.create_default_context(
            cafile=None if in_dir else ca_location, capath=ca_location if in_dir else None
        )
        if cert_location is not None:
            context.load_cert_chain(cert_location, key_location, key_password)
    except (OSError, ssl.SSLError) as e:
        raise ValueError(f"schema.registry.ssl.* could not be loaded: {e}") from e
    return context


class CachedSchemaRegistryClient:
    """A Schema Registry client for the legacy Avro API (deprecated by confluent-kafka as a whole).

    ``url`` is the configuration dict (``url``, ``ssl.ca.location``, ``ssl.certificate.location``,
    ``ssl.key.location``, ``ssl.key.password``, ``basic.auth.credentials.source`` URL, USER_INFO or
    SASL_INHERIT with ``basic.auth.user.info`` or ``sasl.*``, ``auto.register.schemas``), or, in
    the older form that warns, the URL itself with the TLS files as arguments.
    """

    def __init__(
        self,
        url: Any,
        max_schemas_per_subject: int = 1000,
        ca_location: str | None = None,
        cert_location: str | None = None,
        key_location: str | None = None,
    ) -> None:
        conf = url
        if not isinstance(url, dict):
            conf = {
                "url": url,
                "ssl.ca.location": ca_location,
                "ssl.certificate.location": cert_location,
                "ssl.key.location": key_location,
            }
            # same text as confluent-kafka: programs filter this warning by its text
            warnings.warn(
                "CachedSchemaRegistry constructor is being deprecated. "
                "Use CachedSchemaRegistryClient(dict: config) instead. "
                "Existing params ca_location, cert_location and key_location will be replaced with their "
                "librdkafka equivalents as keys in the conf dict: `ssl.ca.location`, `ssl.certificate.location` and "
                "`ssl.key.location` respectively",
                category=DeprecationWarning,
                stacklevel=2,
            )
        address = conf.pop("url", "")
        if not isinstance(address, str):
            raise TypeError("URL must be of type str")
        if not address.startswith("http"):
            raise ValueError("Invalid URL provided for Schema Registry")

        # subject -> {schema: id}, id -> schema, subject -> {schema: version}
        self.subject_to_schema_ids: defaultdict[str, dict[Any, int]] = defaultdict(dict)
        self.id_to_schema: defaultdict[int, Any] = defaultdict(dict)
        self.subject_to_schema_versions: defaultdict[str, dict[Any, int]] = defaultdict(dict)

        ca_location = conf.pop("ssl.ca.location", None)
        cert_location = conf.pop("ssl.certificate.location", None)
        key_location = conf.pop("ssl.key.location", None)
        if bool(cert_location) != bool(key_location):
            # same text as confluent-kafka: programs match on it
            raise ValueError(
                "Both schema.registry.ssl.certificate.location and schema.registry.ssl.key.location must be set"
            )
        auth = _basic_auth(address.rstrip("/"), conf)
        self.url = _without_credentials(address.rstrip("/"))
        key_password = conf.pop("ssl.key.password", None)
        verify = _tls(ca_location, cert_location or None, key_location or None, key_password)
        self.auto_register_schemas = conf.pop("auto.register.schemas", True)
        if conf:
            # same text as confluent-kafka: programs match on it
            raise ValueError(f"Unrecognized configuration properties: {conf.keys()}")
        # As confluent-kafka's sessions send it: always over http (empty credentials included); over
        # https without a key password, only when both user and password are set.
        sent = not self.url.startswith("https") or key_password or all(auth)
        self._session = httpx.Client(verify=verify, timeout=None, auth=httpx.BasicAuth(*auth) if sent else None)

    def __del__(self) -> None:
        self.close()

    def __enter__(self) -> CachedSchemaRegistryClient:
        return self

    def __exit__(self, *args: Any) -> None:
        self.close()

    def close(self) -> None:
        session = getattr(self, "_session", None)  # a constructor that failed made none
        if session is not None:
            session.close()

    def _send_request(
        self, url: str, method: str = "GET", body: Any = None, headers: dict[str, str] | None = None
    ) -> tuple[Any, int]:
        """``(decoded JSON answer or its raw bytes, HTTP status)``: every answer, errors included."""
        if method not in VALID_METHODS:
            raise ClientError(f"Method {method} is invalid; valid methods include {VALID_METHODS}")
        sent = {"Accept": ACCEPT_HDR}
        content = None
        if body:
            content = json.dumps(body).encode("utf-8")
            sent["Content-Type"] = CONTENT_TYPE
        sent.update(headers or {})
        response = self._session.request(method, url, headers=sent, content=content)
        try:
            return response.json(), response.status_code
        except ValueError:  # an answer of the HTTP server in front, not of the registry
            return response.content, response.status_code

    def _cache_schema(
        self, schema: Any, schema_id: int, subject: str | None = None, version: int | None = None
    ) -> None:
        # The first schema seen for an id stays: equal schemas then share one object.
        if schema_id in self.id_to_schema:
            schema = self.id_to_schema[schema_id]
        else:
            self.id_to_schema[schema_id] = schema
        if subject:
            self.subject_to_schema_ids[subject][schema] = schema_id
            if version:
                self.subject_to_schema_versions[subject][schema] = version

    def register(self, subject: str, avro_schema: Any) -> int:
        """The id of ``avro_schema`` registered under ``subject`` (registering it if new there)."""
        known = self.subject_to_schema_ids[subject].get(avro_schema)
        if known is not None:
            return known
        result, code = self._send_request(
            f"{self.url}/subjects/{subject}/versions", method="POST", body={"schema": str(avro_schema)}
        )
        # same texts as confluent-kafka: programs match on them
        if code in (401, 403):
            raise ClientError(f"Unauthorized access. Error code:{code} message:{result}")
        if code == 409:
            raise ClientError(f"Incompatible Avro schema:{code} message:{result}")
        if code == 422:
            raise ClientError(f"Invalid Avro schema:{code} message:{result}")
        if not 200 <= code <= 299:
            raise ClientError(f"Unable to register schema. Error code:{code} message:{result}")
        schema_id: int = result["id"]
        self._cache_schema(avro_schema, schema_id, subject)
        return schema_id

    def check_registration(self, subject: str, avro_schema: Any) -> int:
        """The id of ``avro_schema`` if it is registered under ``subject``; `ClientError` if not."""
        known = self.subject_to_schema_ids[subject].get(avro_schema)
        if known is not None:
            return known
        result, code = self._send_request(
            f"{self.url}/subjects/{subject}", method="POST", body={"schema": str(avro_schema)}
        )
        # same texts as confluent-kafka: programs match on them
        if code in (401, 403):
            raise ClientError(f"Unauthorized access. Error code:{code}")
        if code == 404:
            raise ClientError(f"Schema or subject not found:{code}")
        if not 200 <= code <= 299:
            raise ClientError(f"Unable to check schema registration. Error code:{code}")
        schema_id: int = result["id"]
        self._cache_schema(avro_schema, schema_id, subject)
        return schema_id

    def delete_subject(self, subject: str) -> Any:
        """Delete ``subject``; the registry's answer, the versions it deleted."""
        result, code = self._send_request(f"{self.url}/subjects/{subject}", method="DELETE")
        if not 200 <= code <= 299:
            raise ClientError(f"Unable to delete subject: {result}")
        return result

    def get_by_id(self, schema_id: int) -> Any:
        """The schema with id ``schema_id``, or None when the registry has none (logged)."""
        if schema_id in self.id_to_schema:
            return self.id_to_schema[schema_id]
        result, code = self._send_request(f"{self.url}/schemas/ids/{schema_id}")
        if code == 404:
            log.error("Schema not found:%s", code)
            return None
        if not 200 <= code <= 299:
            log.error("Unable to get schema for the specific ID:%s", code)
            return None
        try:
            schema = loads(result.get("schema"))
        except ClientError as e:
            raise ClientError(f"Received bad schema (id {schema_id}) from registry: {e}") from e
        self._cache_schema(schema, schema_id)
        return schema

    def get_latest_schema(self, subject: str) -> tuple[Any, Any, Any]:
        """``(id, schema, version)`` of the latest version of ``subject``; always asks the registry."""
        return self.get_by_version(subject, "latest")

    def get_by_version(self, subject: str, version: Any) -> tuple[Any, Any, Any]:
        """``(id, schema, version)`` of ``subject``'s ``version``, or three Nones when there is none."""
        result, code = self._send_request(f"{self.url}/subjects/{subject}/versions/{version}")
        if code == 404:
            log.error("Schema not found:%s", code)
            return None, None, None
        if code == 422:
            log.error("Invalid version:%s", code)
            return None, None, None
        if not 200 <= code <= 299:
            return None, None, None
        schema_id, found_version = result["id"], result["version"]
        schema = self.id_to_schema[schema_id] if schema_id in self.id_to_schema else loads(result["schema"])
        self._cache_schema(schema, schema_id, subject, found_version)
        return schema_id, schema, found_version

    def get_version(self, subject: str, avro_schema: Any) -> int | None:
        """The version ``avro_schema`` has under ``subject``, or None."""
        known = self.subject_to_schema_versions[subject].get(avro_schema)
        if known is not None:
            return known
        result, code = self._send_request(
            f"{self.url}/subjects/{subject}", method="POST", body={"schema": str(avro_schema)}
        )
        if code == 404:
            log.error("Not found:%s", code)
            return None
        if not 200 <= code <= 299:
            log.error("Unable to get version of a schema:%s", code)
            return None
        version: int = result["version"]
        self._cache_schema(avro_schema, result["id"], subject, version)
        return version

    def test_compatibility(self, subject: str, avro_schema: Any, version: Any = "latest") -> Any:
        """Whether ``avro_schema`` is compatible with ``subject``'s ``version``; False on any failure (logged)."""
        url = f"{self.url}/compatibility/subjects/{subject}/versions/{version}"
        try:
            result, code = self._send_request(url, method="POST", body={"schema": str(avro_schema)})
            if code == 404:
                log.error("Subject or version not found:%s", code)
                return False
            if code == 422:
                log.error("Invalid subject or schema:%s", code)
                return False
            if 200 <= code <= 299:
                return result.get("is_compatible")
            log.error("Unable to check the compatibility: %s", code)
            return False
        except Exception as e:
            log.error("_send_request() failed: %s", e)
            return False

    def update_compatibility(self, level: str, subject: str | None = None) -> Any:
        """Set the compatibility level (NONE, FULL, FORWARD or BACKWARD), of ``subject`` or global."""
        if level not in VALID_LEVELS:
            raise ClientError(f"Invalid level specified: {level}")
        url = f"{self.url}/config" + (f"/{subject}" if subject else "")
        result, code = self._send_request(url, method="PUT", body={"compatibility": level})
        if 200 <= code <= 299:
            return result["compatibility"]
        raise ClientError(f"Unable to update level: {level}. Error code: {code}")

    def get_compatibility(self, subject: str | None = None) -> str:
        """The compatibility level of ``subject``, or the global one."""
        url = f"{self.url}/config" + (f"/{subject}" if subject else "")
        result, code = self._send_request(url)
        if not 200 <= code <= 299:
            raise ClientError(f"Unable to fetch compatibility level. Error code: {code}")
        compatibility = result.get("compatibilityLevel", None)
        if compatibility not in VALID_LEVELS:
            said = "No compatibility was returned" if compatibility is None else str(compatibility)
            raise ClientError(f"Invalid compatibility level received: {said}")
        return str(compatibility)
