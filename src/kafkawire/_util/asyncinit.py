"""``@asyncinit``: a class whose ``__init__`` is a coroutine function, made with ``await Cls(...)``
(the asyncio serializing clients build their serdes with awaits while they are made)."""

from __future__ import annotations

from typing import Any, TypeVar

C = TypeVar("C", bound=type)


def asyncinit(cls: C) -> C:
    """Make ``cls(...)`` return a coroutine that runs ``await obj.__init__(...)`` and gives ``obj``."""
    allocate: Any = cls.__new__

    async def made(obj: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        await obj.__init__(*args, **kwargs)
        return obj

    def new(klass: type, *args: Any, **kwargs: Any) -> Any:
        # Not an instance of cls, so Python does not call __init__ itself: the coroutine does.
        return made(allocate(klass), args, kwargs)

    cls.__new__ = new  # type: ignore[assignment]
    return cls
