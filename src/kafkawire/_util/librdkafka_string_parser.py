"""librdkafka's parsing of ``key=value`` lists (``rd_string_split`` then ``rd_kafka_conf_kv_split``),
so that OAUTHBEARER config and extension strings split as the C client splits them: a backslash
escapes the next character (``\\t``, ``\\n``, ``\\r``, ``\\0`` become the control character, any
other is kept as is, a separator included, and a backslash at the very end is dropped), leading
whitespace is dropped unless escaped, trailing whitespace always (C's ``isspace``: ASCII only).
An ``identityPoolId`` that is itself a comma-separated list is written with ``\\,``."""

from __future__ import annotations

__all__ = ["parse_key_values", "split"]

_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "0": "\0"}
_C_SPACE = frozenset(" \t\n\v\f\r")


def split(raw: str, sep: str, skip_empty: bool) -> list[str]:
    """``raw`` cut at each unescaped ``sep[0]``; empty fields left out when ``skip_empty``."""
    if raw is None:
        raise TypeError("raw must not be None")
    sep = sep[:1]
    fields: list[str] = []
    field: list[str] = []

    def finish() -> None:
        while field and field[-1] in _C_SPACE:
            field.pop()
        if field or not skip_empty:
            fields.append("".join(field))
        field.clear()

    escaped = False
    for c in raw:
        if escaped:
            escaped = False
            field.append(_ESCAPES.get(c, c))
        elif c == "\\":
            escaped = True
        elif not field and c in _C_SPACE:
            continue  # leading whitespace, before the separator test as librdkafka does
        elif c == sep:
            finish()
        else:
            field.append(c)
    finish()
    return fields


def parse_key_values(raw: str, sep: str, context_label: str | None = None) -> list[tuple[str, str]]:
    """The non-empty fields of ``raw`` as ``(key, value)``, cut at each field's first ``=``;
    ValueError for a field without ``=`` or with an empty key (``context_label`` names the property)."""
    pairs = []
    for field in split(raw, sep, skip_empty=True):
        key, eq, value = field.partition("=")
        if not eq or not key:
            where = f" in {context_label}" if context_label else ""
            raise ValueError(f"Malformed entry '{field}'{where} (expected key=value).")
        pairs.append((key, value))
    return pairs
