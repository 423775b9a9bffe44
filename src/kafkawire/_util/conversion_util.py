"""`ConversionUtil`: an admin value's enum argument given as the enum, its name or its number."""

from __future__ import annotations

from enum import Enum
from typing import Any


class ConversionUtil:
    @staticmethod
    def convert_to_enum(val: Any, enum_clazz: Any) -> Enum:
        """``val`` as a member of ``enum_clazz``: a member as is, a name in any case, or a value
        (what librdkafka hands back); ValueError for an unknown name, TypeError for another type."""
        if type(enum_clazz) is not type(Enum):
            raise TypeError("'enum_clazz' must be of type Enum")
        if isinstance(val, str):
            try:
                return enum_clazz[val.upper()]
            except KeyError:
                raise ValueError(f'Unknown value "{val}": should be a {enum_clazz.__name__}') from None
        if isinstance(val, int):
            return enum_clazz(val)
        if not isinstance(val, enum_clazz):
            raise TypeError(f'Unknown value "{val}": should be a {enum_clazz.__name__}')
        return val
