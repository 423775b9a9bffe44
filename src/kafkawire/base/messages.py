"""`Messages`: confluent-kafka's read-only batch of `Message` (what a share consumer's ``poll()``
returns): a sequence, never a list, so a polled batch cannot be mutated by accident."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import overload

from .model import Message


class Messages:
    __slots__ = ("_items",)

    def __init__(self, messages: Iterable[Message] = ()) -> None:
        self._items = list(messages)

    @classmethod
    def _from_list(cls, messages: list[Message]) -> Messages:
        """Adopt ``messages`` without copying (the consumer hands over a list it no longer uses)."""
        batch = cls.__new__(cls)
        batch._items = messages
        return batch

    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, index: int) -> Message: ...
    @overload
    def __getitem__(self, index: slice) -> Messages: ...
    def __getitem__(self, index: int | slice) -> Message | Messages:
        if isinstance(index, slice):
            return Messages._from_list(self._items[index])
        return self._items[index]

    def __iter__(self) -> Iterator[Message]:
        return iter(self._items)

    def is_empty(self) -> bool:
        return not self._items

    def count(self) -> int:
        return len(self._items)

    def records(self) -> list[Message]:
        """A new plain list of the messages (changing it leaves the batch alone)."""
        return list(self._items)

    def __repr__(self) -> str:
        return f"Messages({self._items!r})"
