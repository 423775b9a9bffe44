"""The Schema Registry client's configuration: URLs, TLS, basic/bearer auth, timeouts, retries.

Shared by the sync and asyncio clients; every mistake fails at construction naming the key.
"""

from __future__ import annotations

import ssl
import urllib.parse
from dataclasses import dataclass, field
from typing import Any

from .auth import BEARER_KEYS, DEFAULT_TIMEOUT, bearer_field_provider

__all__ = ["RestConfig", "error_from_response", "parse_rest_config"]

KNOWN_KEYS = {
    "url",
    "ssl.ca.location",
    "ssl.certificate.location",
    "ssl.key.location",
    "ssl.key.password",
    "basic.auth.credentials.source",
    "basic.auth.user.info",
    "sasl.mechanism",
    "sasl.username",
    "sasl.password",
    "timeout",
    "cache.capacity",
    "cache.latest.ttl.sec",
    "max.retries",
    "retries.wait.ms",
    "retries.max.wait.ms",
    "proxy",
    *BEARER_KEYS,
}


@dataclass
class RestConfig:
    base_urls: list[str]
    auth: tuple[str, str] | None = field(repr=False)  # the password never shows in a repr
    verify: ssl.SSLContext | bool
    timeout: float | None
    cache_capacity: int
    cache_latest_ttl_sec: float | None
    max_retries: int
    retries_wait_ms: int
    retries_max_wait_ms: int
    proxy: str | None
    bearer: Any


def _int(conf: dict[str, Any], key: str, default: int) -> int:
    value = conf.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{key} must be an int, not {type(value)}")
    return value


def _urls(conf: dict[str, Any]) -> tuple[list[str], tuple[str, str] | None]:
    if "url" not in conf:
        # same text as confluent-kafka: its tests match on it
        raise ValueError("Missing required configuration property url")
    url = conf["url"]
    if not isinstance(url, str):
        # same text as confluent-kafka: its tests match on it
        raise TypeError(f"url must be a str, not {type(url)}")
    base_urls: list[str] = []
    userinfo: tuple[str, str] | None = None
    for one in url.split(","):
        one = one.strip()
        parts = urllib.parse.urlsplit(one)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            shown = one if parts.username is None else one.replace(parts.netloc, parts.netloc.rsplit("@", 1)[1])
            # same text as confluent-kafka: its tests match on it
            raise ValueError(f"Invalid url {shown}")  # never the userinfo's password
        if parts.username is not None:
            userinfo = (urllib.parse.unquote(parts.username), urllib.parse.unquote(parts.password or ""))
            netloc = parts.netloc.rsplit("@", 1)[1]
            one = urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
        base_urls.append(one.rstrip("/"))
    return base_urls, userinfo


def _basic_auth(conf: dict[str, Any], userinfo: tuple[str, str] | None) -> tuple[str, str] | None:
    source = conf.get("basic.auth.credentials.source", "URL").upper()
    if source not in ("URL", "USER_INFO", "SASL_INHERIT"):
        raise ValueError(f"basic.auth.credentials.source must be one of URL, USER_INFO, SASL_INHERIT, not {source}")
    if "basic.auth.user.info" in conf:
        if userinfo is not None:
            # same text as confluent-kafka: its tests match on it
            raise ValueError(
                "basic.auth.user.info configured with userinfo credentials in the URL."
                " Remove userinfo credentials from the url or remove basic.auth.user.info from the configuration"
            )
        user_info = conf["basic.auth.user.info"]
        if not isinstance(user_info, str) or ":" not in user_info:
            # same text as confluent-kafka: its tests match on it
            raise ValueError("basic.auth.user.info must be in the form of {username}:{password}")
        user, password = user_info.split(":", 1)
        return user, password
    if source == "SASL_INHERIT":
        mechanism = str(conf.get("sasl.mechanism", "PLAIN")).upper()
        if mechanism == "GSSAPI":
            raise ValueError(
                "basic.auth.credentials.source SASL_INHERIT needs a username and password; sasl.mechanism GSSAPI has none"
            )
        if "sasl.username" not in conf or "sasl.password" not in conf:
            raise ValueError(
                "sasl.username and sasl.password required when basic.auth.credentials.source is SASL_INHERIT"
            )
        return str(conf["sasl.username"]), str(conf["sasl.password"])
    return userinfo


def _tls(conf: dict[str, Any]) -> ssl.SSLContext | bool:
    key, password = conf.get("ssl.key.location"), conf.get("ssl.key.password")
    cert = conf.get("ssl.certificate.location")
    if (key is not None or password is not None) and cert is None:
        # same text as confluent-kafka: its tests match on it
        raise ValueError("ssl.certificate.location required when configuring ssl.key.location or ssl.key.password")
    ca = conf.get("ssl.ca.location")
    if ca is None and cert is None:
        return True
    ctx = ssl.create_default_context(cafile=ca)
    if cert is not None:
        # Read now: a missing or wrong file fails at construction, not at the first request.
        ctx.load_cert_chain(cert, key, password)
    return ctx


def parse_rest_config(conf: dict[str, Any]) -> RestConfig:
    if not isinstance(conf, dict):
        raise TypeError(f"conf must be a dict, not {type(conf).__name__}")
    base_urls, userinfo = _urls(conf)
    auth = _basic_auth(conf, userinfo)
    verify = _tls(conf)
    timeout = conf.get("timeout")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float))):
        raise TypeError(f"timeout must be a number, not {type(timeout)}")
    ttl = conf.get("cache.latest.ttl.sec")
    if ttl is not None and (isinstance(ttl, bool) or not isinstance(ttl, (int, float))):
        raise TypeError(f"cache.latest.ttl.sec must be a number of seconds, not {type(ttl)}")
    proxy = conf.get("proxy")
    retries = (
        _int(conf, "max.retries", 3),
        _int(conf, "retries.wait.ms", 1000),
        _int(conf, "retries.max.wait.ms", 20000),
    )
    bearer = bearer_field_provider(conf, float(timeout) if timeout is not None else DEFAULT_TIMEOUT, retries)
    if bearer is not None and auth is not None:
        raise ValueError("basic auth and bearer auth cannot both be configured")
    unknown = sorted(set(conf) - KNOWN_KEYS)
    if unknown:
        # same text as confluent-kafka: its tests match on it
        raise ValueError(f"Unrecognized properties: {', '.join(unknown)}")
    return RestConfig(
        base_urls=base_urls,
        auth=auth,
        verify=verify,
        timeout=float(timeout) if timeout is not None else None,
        cache_capacity=_int(conf, "cache.capacity", 1000),
        cache_latest_ttl_sec=ttl,
        max_retries=retries[0],
        retries_wait_ms=retries[1],
        retries_max_wait_ms=retries[2],
        proxy=proxy,
        bearer=bearer,
    )


def error_from_response(status: int, body: bytes) -> Any:
    """The SchemaRegistryError for an error answer (its JSON ``error_code``/``message`` when present)."""
    import json

    from ..error import SchemaRegistryError

    try:
        data = json.loads(body)
        return SchemaRegistryError(status, int(data.get("error_code", -1)), str(data.get("message")))
    except (ValueError, TypeError, AttributeError):
        text = body[:200].decode("utf-8", "replace")
        return SchemaRegistryError(status, -1, f"the registry's error answer is not JSON: {text}")
