"""protocol/headers.py: a response read with the decoders it finds once per (API, version) is the
one `codec.decode_from` reads, and what it refuses is named as decode_from names it."""

from __future__ import annotations

import pytest

from kafkawire.protocol import codec, headers
from kafkawire.protocol.apis import API_VERSIONS, METADATA, PRODUCE
from kafkawire.protocol.primitives import DecodeBudget, DecodeBudgetError, DecodeError

PRODUCE_ANSWER = {
    "responses": [
        {
            "name": "t",
            "partition_responses": [{"index": 2, "error_code": 0, "base_offset": 41, "log_append_time_ms": -1}],
        }
    ],
    "throttle_time_ms": 3,
}


@pytest.mark.parametrize("version", [3, 8, 9, 11])
def test_an_answer_decodes_as_its_header_and_body_do_alone(version: int) -> None:
    payload = headers.encode_response(PRODUCE, version, 77, PRODUCE_ANSWER)
    header_version = headers.response_header_version(PRODUCE, version)
    header, pos = codec.decode_from(headers.RESPONSE_HEADER, header_version, payload)
    body = codec.decode_from(PRODUCE.response, version, payload, pos)[0]
    assert headers.decode_response(PRODUCE, version, payload) == (77, body)
    assert header["correlation_id"] == 77 and type(body) is codec.Struct
    assert list(headers.decode_response(PRODUCE, version, payload)[1]) == list(body)  # key order too


def test_api_versions_answers_keep_header_v0_at_every_version() -> None:
    payload = headers.encode_response(API_VERSIONS, 3, 5, {"error_code": 35, "api_keys": []})
    assert payload[4:6] == b"\x00\x23"  # the error code right after the correlation id: no tag buffer
    assert headers.decode_response(API_VERSIONS, 3, payload)[0] == 5


def test_a_short_header_is_named_as_the_response_header() -> None:
    with pytest.raises(DecodeError, match=r"^ResponseHeader v1: "):
        headers.decode_response(PRODUCE, 9, b"\x00\x00")


@pytest.mark.parametrize("cut", [1, 5, 12])
def test_a_cut_body_is_named_as_decode_from_names_it(cut: int) -> None:
    payload = headers.encode_response(PRODUCE, 9, 1, PRODUCE_ANSWER)[:-cut]
    with pytest.raises(DecodeError) as ours:
        headers.decode_response(PRODUCE, 9, payload)
    with pytest.raises(DecodeError) as theirs:
        codec.decode_from(PRODUCE.response, 9, payload, 5)
    assert str(ours.value) == str(theirs.value) and str(ours.value).startswith("ProduceResponse v9: ")


def test_the_callers_budget_bounds_the_body_and_without_one_the_size_does() -> None:
    body = {"brokers": [{"node_id": i, "host": "h", "port": 1} for i in range(50)], "topics": []}
    payload = headers.encode_response(METADATA, 9, 1, body)
    with pytest.raises(DecodeBudgetError, match=r"^MetadataResponse v9: "):
        headers.decode_response(METADATA, 9, payload, DecodeBudget(10))
    assert len(headers.decode_response(METADATA, 9, payload)[1]["brokers"]) == 50
