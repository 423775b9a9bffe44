"""Value equality, hash and repr for plain classes that name their fields once.

The schema's classes, the cluster picture and the handshake's steps were frozen dataclasses;
creating each cost about a millisecond of every client's start-up. They are plain classes with
``__slots__`` now, and this one form gives them what the dataclass did: a subclass lists the
fields its value is made of in ``_fields`` and overrides only where it differs (a hash of fewer
fields, no hash for a value holding a mapping, a shorter repr).
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any, ClassVar


class ValueClass:
    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]] = ()
    _value_of: ClassVar[Any]  # attrgetter over _fields, made once per class

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "_fields" in cls.__dict__:
            cls._value_of = attrgetter(*cls._fields)  # (one name: the bare value, compared the same)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return bool(self._value_of(self) == self._value_of(other))

    def __hash__(self) -> int:
        return hash(self._value_of(self))

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__name__}({shown})"
