"""What the sync and asyncio Schema Registry clients share: values, config, framing, codecs."""

from ..._util.asyncinit import asyncinit as asyncinit
