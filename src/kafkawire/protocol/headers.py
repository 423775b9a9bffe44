"""Request and response headers, and whole messages (header + body, without the size prefix).

Header versions follow the body: flexible bodies use request header v2 / response header v1.
The one irregular case lives here, not in the schema: an ApiVersions response always uses
response header v0, so that a client that guessed too high a version can still read the error.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from typing import Any

from . import apis, codec
from .codec import Buffer, Struct
from .decoding import Decoder
from .frame import Frame
from .primitives import DecodeBudget, DecodeError
from .schema import Api, MessageSchema, Versions, f

API_VERSIONS_KEY = 18

REQUEST_HEADER = MessageSchema(
    "RequestHeader",
    Versions.parse("0-2"),
    Versions.parse("2+"),
    (
        f("request_api_key", "int16"),
        f("request_api_version", "int16"),
        f("correlation_id", "int32"),
        # Always a classic int16-length string, so any broker can read who is asking.
        f("client_id", "string", "1+", nullable="1+", flexible="none"),
    ),
)

RESPONSE_HEADER = MessageSchema(
    "ResponseHeader",
    Versions.parse("0-1"),
    Versions.parse("1+"),
    (f("correlation_id", "int32"),),
)


# The response header's budget: it holds no array, so nothing is ever charged to it (and a budget
# made for each answer cost a tenth of a small answer's decoding).
_NO_ARRAYS = DecodeBudget(0)


def request_header_version(api: Api, version: int) -> int:
    return 2 if version in api.request.flexible else 1


def response_header_version(api: Api, version: int) -> int:
    if api.key == API_VERSIONS_KEY:
        return 0
    return 1 if version in api.response.flexible else 0


def encode_request_frame(
    api: Api, version: int, correlation_id: int, client_id: str | None, body: Mapping[str, Any]
) -> Frame:
    """The request as it goes on the wire: int32 size, header, body, in one `Frame` (a Produce
    request's large record batches stay in their own buffers, referenced: see `Frame.pieces`)."""
    encoders = _REQUEST_ENCODERS.get((id(api), version))
    if encoders is None:
        encoders = _request_encoders(api, version)
    out = Frame(4)
    header = {
        "request_api_key": api.key,
        "request_api_version": version,
        "correlation_id": correlation_id,
        "client_id": client_id,
    }
    encoders[1](out, header)
    encoders[2](out, body)
    _SIZE.pack_into(out, 0, len(out) + out.referenced - 4)
    return out


_SIZE = struct.Struct(">i")
# The header's and the body's encoders of each (API, version) sent, found once: looking them up,
# and the header's version, took a tenth of a small request's encoding.
_REQUEST_ENCODERS: dict[tuple[int, int], tuple[Api, codec.Encoder, codec.Encoder]] = {}


def _request_encoders(api: Api, version: int) -> tuple[Api, codec.Encoder, codec.Encoder]:
    header = codec.encoder(REQUEST_HEADER, request_header_version(api, version))
    encoders = (api, header, codec.encoder(api.request, version))  # holding the API keeps id() unique
    _REQUEST_ENCODERS[(id(api), version)] = encoders
    return encoders


def encode_request(
    api: Api, version: int, correlation_id: int, client_id: str | None, body: Mapping[str, Any]
) -> bytes:
    """The request without its size prefix."""
    return encode_request_frame(api, version, correlation_id, client_id, body).joined()[4:]


def encode_response(api: Api, version: int, correlation_id: int, body: Mapping[str, Any]) -> bytes:
    out = bytearray()
    codec.encode_into(out, RESPONSE_HEADER, response_header_version(api, version), {"correlation_id": correlation_id})
    codec.encode_into(out, api.response, version, body)
    return bytes(out)


def peek_correlation_id(payload: Buffer) -> int:
    """Every response header version starts with the correlation id."""
    if len(payload) < 4:
        raise DecodeError("response shorter than its header")
    return int.from_bytes(payload[:4], "big", signed=True)


def decode_response(api: Api, version: int, payload: Buffer, budget: DecodeBudget | None = None) -> tuple[int, Struct]:
    """Decode a response frame (its body charged to ``budget``: see `codec.decode_from`). Bytes
    after the body are ignored, as the Java client and librdkafka do: the frame's size prefix
    already delimits it, and some peers pad (librdkafka's mock cluster sends one byte too many in
    Metadata v13)."""
    decoders = _RESPONSE_DECODERS.get((id(api), version))
    if decoders is None:
        decoders = _response_decoders(api, version)
    _, header_version, header_decoder, body_decoder = decoders
    try:
        header, pos = header_decoder(payload, 0, _NO_ARRAYS)
    except codec.DECODING_ERRORS as exc:
        raise codec.named_error(RESPONSE_HEADER, header_version, exc) from None
    if budget is None:
        budget = DecodeBudget(codec.allocation_limit(len(payload) - pos))
    try:
        return header["correlation_id"], body_decoder(payload, pos, budget)[0]
    except codec.DECODING_ERRORS as exc:
        raise codec.named_error(api.response, version, exc) from None


# The header's and the body's decoders of each (API, version) answered, found once (as the
# request's encoders are): looking them up cost as much as a small answer's decoding.
_RESPONSE_DECODERS: dict[tuple[int, int], tuple[Api, int, Decoder, Decoder]] = {}


def _response_decoders(api: Api, version: int) -> tuple[Api, int, Decoder, Decoder]:
    header_version = response_header_version(api, version)
    decoders = (
        api,
        header_version,
        codec.decoder(RESPONSE_HEADER, header_version),
        codec.decoder(api.response, version),
    )
    _RESPONSE_DECODERS[(id(api), version)] = decoders
    return decoders


def decode_request_header(payload: Buffer) -> tuple[Struct, int]:
    """Read a request header whose version is implied by its API key and version (for tests/tools)."""
    if len(payload) < 4:
        raise DecodeError("request shorter than its header")
    key = int.from_bytes(payload[0:2], "big", signed=True)
    version = int.from_bytes(payload[2:4], "big", signed=True)
    api = apis.API_BY_KEY.get(key)
    if api is None:
        raise DecodeError(f"unknown API key {key}")
    return codec.decode_from(REQUEST_HEADER, request_header_version(api, version), payload)


def decode_request(payload: Buffer) -> tuple[Struct, Struct]:
    """Decode a whole request (header, body); the inverse of `encode_request`."""
    header, pos = decode_request_header(payload)
    api = apis.API_BY_KEY[header.request_api_key]
    return header, codec.decode(api.request, header.request_api_version, payload, pos)
