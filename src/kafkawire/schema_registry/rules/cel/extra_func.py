"""The functions Confluent's CEL environment adds to the standard ones (``EXTRA_FUNCS``): the
string checks defined here (protovalidate's ``isEmail``, ``isHostname``, ``isIpv4``, ``isIpv6``,
``isUri``, ``isUriRef``, ``isUuid``, with the plain-Python predicates under them, ``validate_*``),
``string.format``, and the ``decimal``, ``timestamp`` and ``variant`` families of their own modules, each
answering as confluent-kafka's does.
"""

from __future__ import annotations

import ipaddress
import uuid
from email.utils import parseaddr
from typing import Any
from urllib.parse import urlparse

from celpy import celtypes
from celpy.evaluation import CELEvalError

from . import string_format

__all__ = [
    "EXTRA_FUNCS",
    "FUNCTIONS",
    "is_email",
    "is_hostname",
    "is_ipv4",
    "is_ipv6",
    "is_uri",
    "is_uri_ref",
    "is_uuid",
    "make_extra_funcs",
    "string_format",
    "validate_email",
    "validate_host_and_port",
    "validate_ip",
    "validate_port",
    "validate_uuid",
]

_HOST_CHARACTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-")


def _validate_hostname(host: str) -> bool:
    """An RFC 1123 host name: dot-separated labels of letters, digits and inner hyphens, the last
    not all digits (that would be an IPv4 address)."""
    if not host or len(host) > 253:
        return False
    labels = (host[:-1] if host.endswith(".") else host).split(".")
    for label in labels:
        if not 0 < len(label) <= 63 or label[0] == "-" or label[-1] == "-" or not set(label) <= _HOST_CHARACTERS:
            return False
    return not labels[-1].isdigit()


def validate_email(addr: str) -> bool:
    """A bare address (no display name) of at most 254 characters: a local part of at most 64, one
    ``@``, a host name."""
    if parseaddr(addr)[1] != addr or len(addr) > 254:
        return False
    parts = addr.split("@")
    return len(parts) == 2 and len(parts[0]) <= 64 and _validate_hostname(parts[1])


def validate_host_and_port(string: str, *, port_required: bool) -> bool:
    """``host``, ``host:port``, ``[ipv6]`` or ``[ipv6]:port`` (the host a name or an IPv4 address)."""
    if not string:
        return False
    colon = string.rfind(":")
    if string[0] == "[":
        after = string.find("]") + 1
        if after == len(string):
            return not port_required and validate_ip(string[1 : after - 1], 6)
        return after == colon and validate_ip(string[1 : after - 1]) and validate_port(string[colon + 1 :])
    if colon == -1:
        return not port_required and (_validate_hostname(string) or validate_ip(string, 4))
    host, port = string[:colon], string[colon + 1 :]
    return (_validate_hostname(host) or validate_ip(host, 4)) and validate_port(port)


def validate_port(val: str) -> bool:
    """An integer no greater than 65535."""
    try:
        return int(val) <= 65535
    except ValueError:
        return False


def validate_ip(val: str | bytes, version: int | None = None) -> bool:
    """An IP address, of ``version`` 4 or 6 when given (another version is an evaluation error)."""
    kinds: dict[int | None, Any] = {None: ipaddress.ip_address, 4: ipaddress.IPv4Address, 6: ipaddress.IPv6Address}
    if version not in kinds:
        raise CELEvalError("invalid argument, expected 4 or 6")
    try:
        kinds[version](val)
    except ValueError:
        return False
    return True


def validate_uuid(val: str) -> bool:
    """Text ``uuid.UUID`` reads (hyphens, braces and a ``urn:uuid:`` prefix optional)."""
    try:
        uuid.UUID(val)
    except ValueError:
        return False
    return True


def _string(value: Any) -> str:
    if not isinstance(value, celtypes.StringType):
        raise CELEvalError("invalid argument, expected string")
    return str(value)


def _address(value: Any) -> str | bytes:
    if not isinstance(value, (celtypes.BytesType, celtypes.StringType)):
        raise CELEvalError("invalid argument, expected string or bytes")
    return bytes(value) if isinstance(value, celtypes.BytesType) else str(value)


def is_ipv4(value: Any) -> celtypes.BoolType:
    return celtypes.BoolType(validate_ip(_address(value), 4))


def is_ipv6(value: Any) -> celtypes.BoolType:
    return celtypes.BoolType(validate_ip(_address(value), 6))


def is_email(value: Any) -> celtypes.BoolType:
    return celtypes.BoolType(validate_email(_string(value)))


def is_uri(value: Any) -> celtypes.BoolType:
    """An absolute URI with an authority and a path (``https://host/p``; ``https://host`` is not)."""
    url = urlparse(_string(value))
    return celtypes.BoolType(bool(url.scheme and url.netloc and url.path))


def is_uri_ref(value: Any) -> celtypes.BoolType:
    """Any URI reference but a fragment without both a scheme and a path."""
    url = urlparse(_string(value))
    return celtypes.BoolType(not (not (url.scheme and url.path) and url.fragment))


def is_hostname(value: Any) -> celtypes.BoolType:
    return celtypes.BoolType(_validate_hostname(_string(value)))


def is_uuid(value: Any) -> celtypes.BoolType:
    return celtypes.BoolType(validate_uuid(_string(value)))


# By the names CEL expressions call them.
FUNCTIONS: dict[str, Any] = {
    "isEmail": is_email,
    "isHostname": is_hostname,
    "isIpv4": is_ipv4,
    "isIpv6": is_ipv6,
    "isUri": is_uri,
    "isUriRef": is_uri_ref,
    "isUuid": is_uuid,
}


def make_extra_funcs(locale: str) -> dict[str, Any]:
    """Every function Confluent's CEL rules add, by the name an expression calls it, ``format``
    for ``locale``. The families import here, when an environment is made, not with the module."""
    from .decimal_funcs import DECIMAL_FUNCS, DECIMAL_OPERATOR_FUNCS
    from .timestamp_funcs import TIMESTAMP_FUNCS
    from .variant_funcs import VARIANT_FUNCS

    return {
        "format": string_format.StringFormat(locale).format,
        **FUNCTIONS,
        **DECIMAL_FUNCS,
        **DECIMAL_OPERATOR_FUNCS,
        **TIMESTAMP_FUNCS,
        **VARIANT_FUNCS,
    }


EXTRA_FUNCS = make_extra_funcs("en_US")
