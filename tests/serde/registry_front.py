"""A loopback HTTP front whose every answer comes from confluent-kafka's in-process registry.

The registry logic judging our REST client is confluent's (``MockSchemaRegistryClient``): this
module only maps the Schema Registry REST API's routes onto its methods and its
``SchemaRegistryError``s onto HTTP errors. Routes its mock does not implement answer 404 with
error code 40499 ("not offered by confluent's mock"), so no answer here is invented.
"""

from __future__ import annotations

import json
import re
import ssl
import threading
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from confluent_kafka.schema_registry import AssociationCreateOrUpdateRequest, Schema, ServerConfig
from confluent_kafka.schema_registry._sync.mock_schema_registry_client import MockSchemaRegistryClient
from confluent_kafka.schema_registry.error import SchemaRegistryError

Route = tuple[str, re.Pattern[str], Callable[..., Any]]


class NotOffered(Exception):
    """confluent's mock has no answer for this route (its method returns None)."""


def _offered(answer: Any) -> Any:
    if answer is None:
        raise NotOffered
    return answer.to_dict()


def _flag(query: dict[str, list[str]], name: str) -> bool:
    return query.get(name, ["false"])[0] == "true"


def _routes(reg: MockSchemaRegistryClient) -> list[Route]:
    def register(m: tuple[str, ...], q: dict[str, list[str]], body: Any) -> Any:
        return reg.register_schema_full_response(m[1], Schema.from_dict(body), _flag(q, "normalize")).to_dict()

    def lookup(m: tuple[str, ...], q: dict[str, list[str]], body: Any) -> Any:
        return reg.lookup_schema(
            m[1], Schema.from_dict(body), _flag(q, "normalize"), deleted=_flag(q, "deleted")
        ).to_dict()

    def version(m: tuple[str, ...], q: dict[str, list[str]], body: Any) -> Any:
        v = m[2]
        found = reg.get_latest_version(m[1]) if v == "latest" else reg.get_version(m[1], int(v), _flag(q, "deleted"))
        return found.to_dict()

    def metadata(m: tuple[str, ...], q: dict[str, list[str]], body: Any) -> Any:
        md = dict(zip(q.get("key", []), q.get("value", []), strict=True))
        return reg.get_latest_with_metadata(m[1], md, _flag(q, "deleted")).to_dict()

    def config_put(m: tuple[str, ...], q: dict[str, list[str]], body: Any) -> Any:
        return _offered(reg.set_config(m[1], ServerConfig.from_dict(body)))

    def config_get(m: tuple[str, ...], q: dict[str, list[str]], body: Any) -> Any:
        return _offered(reg.get_config(m[1]))

    def associate(m: tuple[str, ...], q: dict[str, list[str]], body: Any) -> Any:
        return reg.create_association(AssociationCreateOrUpdateRequest.from_dict(body)).to_dict()

    def associations(m: tuple[str, ...], q: dict[str, list[str]], body: Any) -> Any:
        kind, types = q.get("resourceType", [None])[0], q.get("associationType")
        return [a.to_dict() for a in reg.get_associations_by_resource_name(m[2], m[1], kind, types)]

    def dissociate(m: tuple[str, ...], q: dict[str, list[str]], body: Any) -> Any:
        kind, types = q.get("resourceType", [None])[0], q.get("associationType")
        return reg.delete_associations(m[1], kind, types, _flag(q, "cascadeLifecycle"))

    return [
        ("POST", re.compile(r"/subjects/([^/]+)/versions"), register),
        ("POST", re.compile(r"/subjects/([^/]+)"), lookup),
        ("GET", re.compile(r"/schemas/ids/(\d+)"), lambda m, q, b: reg.get_schema(int(m[1])).to_dict()),
        ("GET", re.compile(r"/schemas/guids/([^/]+)"), lambda m, q, b: reg.get_schema_by_guid(m[1]).to_dict()),
        ("GET", re.compile(r"/subjects"), lambda m, q, b: reg.get_subjects()),
        ("GET", re.compile(r"/subjects/([^/]+)/versions"), lambda m, q, b: reg.get_versions(m[1])),
        ("GET", re.compile(r"/subjects/([^/]+)/versions/([^/]+)"), version),
        ("GET", re.compile(r"/subjects/([^/]+)/metadata"), metadata),
        ("DELETE", re.compile(r"/subjects/([^/]+)"), lambda m, q, b: reg.delete_subject(m[1], _flag(q, "permanent"))),
        (
            "DELETE",
            re.compile(r"/subjects/([^/]+)/versions/(\d+)"),
            lambda m, q, b: reg.delete_version(m[1], int(m[2]), _flag(q, "permanent")),
        ),
        ("PUT", re.compile(r"/config/([^/]+)"), config_put),
        ("GET", re.compile(r"/config/([^/]+)"), config_get),
        ("POST", re.compile(r"/associations"), associate),
        ("GET", re.compile(r"/associations/resources/([^/]+)/([^/]+)"), associations),
        ("DELETE", re.compile(r"/associations/resources/([^/]+)"), dissociate),
    ]


class RegistryFront:
    """``url`` serves confluent's registry ``registry``; ``requests`` counts (method, path) seen,
    ``queries`` each request's query parameters, ``authorizations`` each request's Authorization
    header (None without one), ``headers`` each request's headers."""

    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        self.registry = MockSchemaRegistryClient({"url": "mock://front"})
        self.requests: list[tuple[str, str]] = []
        self.queries: list[dict[str, list[str]]] = []
        self.authorizations: list[str | None] = []
        self.headers: list[dict[str, str]] = []
        routes = _routes(self.registry)
        front = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _serve(self, method: str) -> None:
                url = urllib.parse.urlsplit(self.path)
                path = url.path  # subjects are matched percent-encoded ("a/b.proto" is one segment)
                query = urllib.parse.parse_qs(url.query)
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length)) if length else None
                front.requests.append((method, path))
                front.queries.append(query)
                front.authorizations.append(self.headers.get("Authorization"))
                front.headers.append(dict(self.headers.items()))
                for verb, pattern, handler in routes:
                    m = pattern.fullmatch(path)
                    if verb == method and m:
                        args = (path, *(urllib.parse.unquote(g) for g in m.groups()))  # args[1]: first group
                        try:
                            self._answer(200, handler(args, query, body))
                        except SchemaRegistryError as e:
                            self._answer(e.http_status_code, {"error_code": e.error_code, "message": e.error_message})
                        except NotOffered:
                            self._not_offered(method, path)
                        return
                self._not_offered(method, path)

            def _not_offered(self, method: str, path: str) -> None:
                self._answer(404, {"error_code": 40499, "message": f"not offered by confluent's mock: {method} {path}"})

            def _answer(self, status: int, payload: Any) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/vnd.schemaregistry.v1+json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self._serve("GET")

            def do_POST(self) -> None:
                self._serve("POST")

            def do_PUT(self) -> None:
                self._serve("PUT")

            def do_DELETE(self) -> None:
                self._serve("DELETE")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        if tls is not None:  # TLS is Python's ssl module's; the registry logic stays confluent's
            self.server.socket = tls.wrap_socket(self.server.socket, server_side=True)
        scheme = "https" if tls is not None else "http"
        self.url = f"{scheme}://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@contextmanager
def registry_front(tls: ssl.SSLContext | None = None) -> Iterator[RegistryFront]:
    front = RegistryFront(tls)
    front.thread.start()
    try:
        yield front
    finally:
        front.close()
