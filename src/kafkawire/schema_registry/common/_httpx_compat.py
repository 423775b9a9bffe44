"""Which httpx the registry clients speak through: ``httpx2`` (httpx's maintained successor) when
installed, else ``httpx``, as confluent-kafka picks (so one process holds one of them, the one
Authlib also prefers)."""

try:
    import httpx2 as httpx
except ImportError:
    import httpx  # type: ignore[no-redef]

Response = httpx.Response
BasicAuth = httpx.BasicAuth

__all__ = ["BasicAuth", "Response", "httpx"]
