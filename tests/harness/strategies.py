"""Hypothesis strategies for protocol messages: a valid value of any schema at any version."""

from __future__ import annotations

import uuid
from typing import Any

from hypothesis import strategies as st

from kafkawire.protocol import codec
from kafkawire.protocol.codec import Struct
from kafkawire.protocol.schema import Array, Field, MessageSchema

_INT_RANGES = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint16": (0, 2**16 - 1),
}


def _primitive(type_: str) -> st.SearchStrategy[Any]:
    if type_ in _INT_RANGES:
        lo, hi = _INT_RANGES[type_]
        return st.integers(lo, hi)
    if type_ == "float64":
        return st.floats(allow_nan=False)
    if type_ == "bool":
        return st.booleans()
    if type_ == "uuid":
        return st.uuids().map(lambda u: uuid.UUID(int=u.int))
    if type_ == "string":
        return st.text(max_size=12)
    return st.binary(max_size=24)  # bytes, records


def _value(fld: Field, version: int, flexible: bool) -> st.SearchStrategy[Any]:
    t = fld.type
    if isinstance(t, Array):
        element = _struct(t.of, version, flexible) if isinstance(t.of, tuple) else _primitive(str(t.of))
        strategy: st.SearchStrategy[Any] = st.lists(element, max_size=3)
    elif isinstance(t, tuple):
        strategy = _struct(t, version, flexible)
    else:
        strategy = _primitive(t)
    if version in fld.nullable:
        strategy = st.none() | strategy
    return strategy


def _struct(fields: tuple[Field, ...], version: int, flexible: bool) -> st.SearchStrategy[Struct]:
    parts: dict[str, st.SearchStrategy[Any]] = {}
    for fld in fields:
        if version in fld.versions:
            parts[fld.name] = _value(fld, version, flexible)
        else:
            parts[fld.name] = st.just(codec.default_struct((fld,))[fld.name])
    return st.fixed_dictionaries(parts).map(Struct)


def message_values(schema: MessageSchema, version: int) -> st.SearchStrategy[Struct]:
    """Values of ``schema`` at ``version`` that encode: every field present in the version drawn."""
    return _struct(schema.fields, version, version in schema.flexible)
