"""``sasl.oauthbearer.extensions`` (RFC 7628 SASL extensions) as a dict, split as librdkafka splits it."""

from __future__ import annotations

from ..._util.librdkafka_string_parser import parse_key_values

__all__ = ["CONFIG_KEY", "parse", "parse_key_values"]

CONFIG_KEY: str = "sasl.oauthbearer.extensions"


def parse(raw: str | None) -> dict[str, str] | None:
    """The extensions, the last of a repeated key winning; None for none (None, "", or only
    separators). ValueError for an entry without ``=`` or with an empty key."""
    if not raw:
        return None
    return dict(parse_key_values(raw, ",", CONFIG_KEY)) or None
