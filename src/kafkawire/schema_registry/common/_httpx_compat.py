"""confluent-kafka's choice of HTTP library, at its module path: ``httpx2`` (httpx's maintained
successor) when installed, else ``httpx``, with its ``Response`` and ``BasicAuth``. kafkawire's
registry clients speak ``httpx`` itself (the library the tests' HTTP mocks intercept)."""

try:
    import httpx2 as httpx
except ImportError:
    import httpx  # type: ignore[no-redef]

Response = httpx.Response
BasicAuth = httpx.BasicAuth

__all__ = ["BasicAuth", "Response", "httpx"]
