"""Hypothesis round-trips: for every API, version and direction, decode(encode(x)) == x."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkawire.protocol import codec, headers
from kafkawire.protocol.apis import ALL_APIS
from kafkawire.protocol.codec import Struct
from kafkawire.protocol.primitives import DecodeError
from kafkawire.protocol.schema import MessageSchema
from tests.harness.strategies import message_values

CASES = [
    (schema, version)
    for api in ALL_APIS
    for schema in (api.request, api.response)
    for version in range(api.min_version, api.max_version + 1)
]


@pytest.mark.parametrize("schema,version", CASES, ids=[f"{s.name}-v{v}" for s, v in CASES])
def test_roundtrip(schema: MessageSchema, version: int) -> None:
    @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
    @given(message_values(schema, version))
    def check(value: Struct) -> None:
        data = codec.encode(schema, version, value)
        assert codec.decode(schema, version, data) == value

    check()


@pytest.mark.parametrize("schema,version", CASES[::7], ids=[f"{s.name}-v{v}" for s, v in CASES[::7]])
def test_garbage_only_raises_decode_error(schema: MessageSchema, version: int) -> None:
    @settings(max_examples=40, deadline=None)
    @given(st.binary(max_size=64))
    def check(data: bytes) -> None:
        with contextlib.suppress(DecodeError):
            codec.decode(schema, version, data)

    check()


def test_truncation_of_a_valid_message_raises_decode_error() -> None:
    api = next(a for a in ALL_APIS if a.name == "ApiVersions")
    value = {"api_keys": [{"api_key": 0, "min_version": 0, "max_version": 9}], "throttle_time_ms": 3}
    data = codec.encode(api.response, 3, value)
    for cut in range(len(data)):
        with pytest.raises(DecodeError):
            codec.decode(api.response, 3, data[:cut])


def test_huge_declared_array_count_fails_without_allocating() -> None:
    api = next(a for a in ALL_APIS if a.name == "ApiVersions")
    hostile = b"\x00\x00" + b"\x7f\xff\xff\xff"  # error_code, then an array of 2^31-1 entries
    with pytest.raises(DecodeError, match="exceeds"):
        codec.decode(api.response, 0, hostile)


@pytest.mark.parametrize("api", ALL_APIS, ids=lambda a: a.name)
def test_whole_request_roundtrip_with_header(api: Any) -> None:
    for version in range(api.min_version, api.max_version + 1):
        body = codec.default_struct(api.request.fields)
        data = headers.encode_request(api, version, 7, "kafkawire-test", body)
        header, decoded = headers.decode_request(data)
        assert (header.request_api_key, header.request_api_version, header.correlation_id) == (api.key, version, 7)
        assert header.client_id == "kafkawire-test"
        assert decoded == body
        response = codec.default_struct(api.response.fields)
        assert headers.decode_response(api, version, headers.encode_response(api, version, 9, response)) == (
            9,
            response,
        )
