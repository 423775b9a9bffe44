"""Every Python example in the README and the docs site is Python: the broker and Spark suites run
them, but those run in CI's slow share; a block that does not even compile is caught here."""

from __future__ import annotations

import pytest

from tests.harness.doc_blocks import README, pages, python_blocks

BLOCKS = [(path, block) for path in [README, *pages()] for block in python_blocks(path.read_text())]


@pytest.mark.parametrize(("path", "block"), BLOCKS, ids=[f"{p.name}-{i}" for i, (p, _) in enumerate(BLOCKS)])
def test_the_block_compiles(path: object, block: str) -> None:
    compile(block, str(path), "exec")
