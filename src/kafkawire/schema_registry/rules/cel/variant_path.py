"""The paths ``variants.path(v, path)`` follows into a Variant: a small JSONPath, as Confluent's
clients accept it.

``$`` is the value itself; ``.name`` a field by an identifier (a letter or ``_``, then letters,
digits or ``_``, Unicode letters included); ``["key"]`` or ``['key']`` a field by any key, whose
only escapes are ``\\\\`` and a backslash before the quote (anything else is refused, never
decoded into another key); ``[n]`` an element, ``n`` a non-negative int32. A malformed path is a
ValueError; a path that leads nowhere (no such field, index past the end, a step into a scalar)
gives None.
"""

from __future__ import annotations

from functools import lru_cache

from ...confluent.type.variant_utils import Variant, VariantType

__all__ = ["Segment", "parse", "walk"]

# One step: ("field", key) or ("index", position).
Segment = tuple[str, object]

_INT32_MAX = 2**31 - 1
# Each kind of step: the container type it reads, and how it reads it.
_STEPS = {
    "field": (VariantType.OBJECT, Variant.get_field_by_key),
    "index": (VariantType.ARRAY, Variant.get_element_at_index),
}


def walk(root: Variant, path: str) -> Variant | None:
    """The value ``path`` leads to from ``root``, or None where it leads nowhere."""
    here: Variant | None = root
    for kind, arg in parse(path):
        if here is None:
            return None
        container, step = _STEPS[kind]
        here = step(here, arg) if here.get_type() is container else None  # type: ignore[operator]
    return here


@lru_cache(maxsize=1000)
def parse(path: str) -> tuple[Segment, ...]:
    """``path``'s steps. A rule names the same literal path for every record, hence the cache
    (a malformed path is not cached: it raises each time)."""
    if not path.startswith("$"):
        raise ValueError("variant path must start with '$'" + (f", got: {path}" if path else ""))
    steps: list[Segment] = []
    at = 1
    while at < len(path):
        if path[at] == ".":
            key, at = _identifier(path, at + 1)
            steps.append(("field", key))
        elif path[at] == "[":
            at += 1
            if at == len(path):
                raise ValueError(f"unexpected end of input after '[' in variant path: {path}")
            if path[at] in "\"'":
                key, at = _quoted(path, at)
                steps.append(("field", key))
            else:
                index, at = _index(path, at)
                steps.append(("index", index))
            if at == len(path) or path[at] != "]":
                raise ValueError(f"expected ']' in variant path: {path}")
            at += 1
        else:
            raise ValueError(f"unexpected character '{path[at]}' in variant path: {path}")
    return tuple(steps)


def _identifier(path: str, start: int) -> tuple[str, int]:
    if start == len(path) or not (path[start].isalpha() or path[start] == "_"):
        raise ValueError(f"expected identifier (starting with a letter or '_') after '.' in variant path: {path}")
    end = start + 1
    while end < len(path) and (path[end].isalnum() or path[end] == "_"):
        end += 1
    return path[start:end], end


def _quoted(path: str, start: int) -> tuple[str, int]:
    quote, at = path[start], start + 1
    key: list[str] = []
    while at < len(path):
        char = path[at]
        at += 1
        if char == quote:
            return "".join(key), at
        if char != "\\":
            key.append(char)
            continue
        if at == len(path):
            raise ValueError(f"unterminated escape at end of quoted key in variant path: {path}")
        escaped = path[at]
        at += 1
        if escaped not in ("\\", quote):
            raise ValueError(
                f"unsupported escape '\\{escaped}' in quoted key of variant path "
                f"(only '\\\\' and '\\{quote}' are allowed): {path}"
            )
        key.append(escaped)
    raise ValueError(f"unterminated quoted key in variant path: {path}")


def _index(path: str, start: int) -> tuple[int, int]:
    if path[start] == "-":
        raise ValueError(f"negative indices are not supported in variant path: {path}")
    end = start
    while end < len(path) and "0" <= path[end] <= "9":  # ASCII digits only: not str.isdigit
        end += 1
    if end == start:
        raise ValueError(f"expected integer index in variant path: {path}")
    index = int(path[start:end])
    if index > _INT32_MAX:
        raise ValueError(f"index out of int range in variant path: {path}")
    return index, end
