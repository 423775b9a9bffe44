"""``tests.assertions`` for sentry-arroyo's own test suite, which its sdist imports but does not ship
(written here from how the suite calls it): a block must move ``read()`` from one value to another,
or leave it at a value."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def assert_changes(read: Callable[[], Any], before: Any, after: Any) -> Iterator[None]:
    seen = read()
    assert seen == before, f"before the block: {seen!r}, expected {before!r}"
    yield
    seen = read()
    assert seen == after, f"after the block: {seen!r}, expected {after!r}"


@contextmanager
def assert_does_not_change(read: Callable[[], Any], value: Any) -> Iterator[None]:
    with assert_changes(read, value, value):
        yield
