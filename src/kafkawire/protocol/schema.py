"""The vocabulary in which every Kafka API is declared once, as data.

A message is a list of `Field`s; each field says in which versions it exists, in which it may be
null, and (in flexible versions) whether it travels as a tagged field. The same declaration serves
every version: `kafkawire.protocol.codec` turns it into an encoder and a decoder per version.
Names are Kafka's, in snake_case (``TopicId`` -> ``topic_id``); `tests/conformance` checks every
declaration against the Apache Kafka JSON message specs.
"""

from __future__ import annotations

import uuid
from typing import Any, Union

from .value_class import ValueClass

PRIMITIVES = frozenset(
    {"int8", "int16", "int32", "int64", "uint16", "float64", "bool", "uuid", "string", "bytes", "records"}
)

ZERO_UUID = uuid.UUID(int=0)

_NO_DEFAULT: Any = object()


class Versions(ValueClass):
    """A closed or open range of versions: ``"3+"``, ``"0-8"``, ``"5"`` or ``"none"``.

    This module's classes are plain classes with the equality and hash of values (value_class.py).
    """

    __slots__ = ("high", "low")
    _fields = ("low", "high")

    def __init__(self, low: int, high: int | None) -> None:
        self.low = low
        self.high = high  # None = no upper bound

    @classmethod
    def parse(cls, spec: str) -> Versions:
        spec = spec.strip()
        if spec == "none":
            return NONE
        if spec.endswith("+"):
            return cls(int(spec[:-1]), None)
        if "-" in spec:
            lo, hi = spec.split("-")
            return cls(int(lo), int(hi))
        return cls(int(spec), int(spec))

    def __contains__(self, version: int) -> bool:
        return self.low <= version and (self.high is None or version <= self.high)

    def __str__(self) -> str:
        if self == NONE:
            return "none"
        if self.high is None:
            return f"{self.low}+"
        return f"{self.low}-{self.high}" if self.high != self.low else str(self.low)


NONE = Versions(1, 0)  # an empty range: nothing is inside it
ALL = Versions(0, None)


class Array(ValueClass):
    """An array of a primitive type name or of a struct (a list of fields)."""

    __slots__ = ("of",)
    _fields = ("of",)

    def __init__(self, of: FieldType) -> None:
        self.of = of


FieldType = Union[str, Array, "tuple[Field, ...]"]


class Field(ValueClass):
    __slots__ = ("default", "flexible", "ignorable", "name", "nullable", "tag", "tagged", "type", "versions")
    _fields = ("name", "type", "versions", "nullable", "tag", "tagged", "flexible", "ignorable")

    def __init__(
        self,
        name: str,
        type: FieldType,
        versions: Versions = ALL,
        nullable: Versions = NONE,
        tag: int | None = None,
        tagged: Versions = NONE,
        flexible: Versions | None = None,  # overrides the message's flexible versions (RequestHeader.ClientId)
        ignorable: bool = False,  # may be dropped silently when the chosen version lacks it
        default: Any = None,  # not part of equality: lists are unhashable; compared in tests
    ) -> None:
        self.name = name
        self.type = type
        self.versions = versions
        self.nullable = nullable
        self.tag = tag
        self.tagged = tagged
        self.flexible = flexible
        self.ignorable = ignorable
        self.default = default

    def __repr__(self) -> str:
        return f"Field({self.name!r}, {self.type!r}, versions={self.versions})"

    @property
    def is_struct(self) -> bool:
        return isinstance(self.type, tuple)

    @property
    def struct_fields(self) -> tuple[Field, ...]:
        """The fields of a struct or of the struct an array holds; empty for primitives."""
        t = self.type.of if isinstance(self.type, Array) else self.type
        return t if isinstance(t, tuple) else ()


def default_for(type_: FieldType, nullable: Versions) -> Any:
    """Kafka's implicit defaults: zero, empty, false; nullable fields still default to empty."""
    if isinstance(type_, Array):
        return []
    if isinstance(type_, tuple):
        return None  # the codec builds a struct of its fields' defaults
    if type_ in ("int8", "int16", "int32", "int64", "uint16"):
        return 0
    if type_ == "float64":
        return 0.0
    if type_ == "bool":
        return False
    if type_ == "uuid":
        return ZERO_UUID
    if type_ == "string":
        return ""
    if type_ == "bytes":
        return b""
    if type_ == "records":
        return None
    raise ValueError(f"unknown type {type_!r}")


def f(
    name: str,
    type_: FieldType | list[Field],
    versions: str = "0+",
    *,
    nullable: str = "none",
    tag: int | None = None,
    tagged: str | None = None,
    flexible: str | None = None,
    ignorable: bool = False,
    default: Any = _NO_DEFAULT,
) -> Field:
    """Declare a field. A list of fields as the type declares a nested struct.

    A tagged field exists in ``versions`` and travels as tag ``tag`` (its tagged versions default
    to its versions, as in nearly every Kafka spec).
    """
    if isinstance(type_, list):
        type_ = tuple(type_)
    if isinstance(type_, str) and type_ not in PRIMITIVES:
        raise ValueError(f"field {name}: unknown type {type_!r}")
    vers = Versions.parse(versions)
    null = Versions.parse(nullable)
    tagged_versions = NONE if tag is None else Versions.parse(tagged or versions)
    return Field(
        name=name,
        type=type_,
        versions=vers,
        nullable=null,
        tag=tag,
        tagged=tagged_versions,
        flexible=None if flexible is None else Versions.parse(flexible),
        ignorable=ignorable,
        default=default_for(type_, null) if default is _NO_DEFAULT else default,
    )


def array(of: str | Field | list[Field], *more: Field) -> Array:
    """``array("int32")`` or ``array(f(...), f(...))``: an array of a primitive or of a struct."""
    if isinstance(of, str):
        if of not in PRIMITIVES:
            raise ValueError(f"unknown array element type {of!r}")
        return Array(of)
    fields = [of, *more] if isinstance(of, Field) else [*of, *more]
    return Array(tuple(fields))


class MessageSchema(ValueClass):
    """One direction of one API (or a header): the fields and the versions they apply to."""

    __slots__ = ("fields", "flexible", "name", "versions")
    _fields = ("name", "versions", "flexible", "fields")

    def __init__(self, name: str, versions: Versions, flexible: Versions, fields: tuple[Field, ...]) -> None:
        self.name = name
        self.versions = versions
        self.flexible = flexible
        self.fields = fields

    def __repr__(self) -> str:
        return f"MessageSchema({self.name!r}, {self.versions})"


class Api(ValueClass):
    """A request/response pair under one API key."""

    __slots__ = ("key", "max_version", "min_version", "name", "request", "response")
    _fields = ("key", "name", "request", "response")

    def __init__(self, key: int, name: str, request: MessageSchema, response: MessageSchema) -> None:
        self.key = key
        self.name = name
        self.request = request
        self.response = response
        high = request.versions.high
        if high is None:
            raise ValueError(f"{name}: an API's versions are a closed range")
        # Read at every request (its version is chosen between them): attributes, not properties.
        self.min_version: int = request.versions.low
        self.max_version: int = high

    def __hash__(self) -> int:
        """By key alone: a hash of the fields would walk both schemas, on every request that asked
        whether its API fails over (core/failover.py)."""
        return hash(self.key)

    def __repr__(self) -> str:
        return f"Api({self.key}, {self.name!r})"

    @property
    def versions(self) -> Versions:
        return self.request.versions


def api(
    key: int,
    name: str,
    *,
    versions: str,
    flexible: str,
    request: list[Field],
    response: list[Field],
) -> Api:
    """Declare an API; request and response share their version range and flexible versions."""
    vers = Versions.parse(versions)
    flex = Versions.parse(flexible)
    return Api(
        key=key,
        name=name,
        request=MessageSchema(f"{name}Request", vers, flex, tuple(request)),
        response=MessageSchema(f"{name}Response", vers, flex, tuple(response)),
    )
