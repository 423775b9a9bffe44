"""The documents' code blocks, for the tests that run them as written: the README's quick starts
and each page of the documentation site (docs/), in the order mkdocs.yml lists the pages."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
_PYTHON = r"```python\n(.*?)```"


def pages() -> list[Path]:
    """The site's pages in their navigation order (mkdocs.yml's `nav`)."""
    nav = re.findall(r"^\s+- [^:]+: (\S+\.md)$", (ROOT / "mkdocs.yml").read_text(), re.M)
    return [DOCS / name for name in nav]


def section(path: Path, heading: str) -> str:
    """The text under a heading (`## Name`), up to the next heading of the same level or above."""
    level = heading.split(" ", 1)[0]
    text = path.read_text()
    start = text.index(heading + "\n") + len(heading) + 1
    ends = [m.start() for m in re.finditer(rf"^#{{1,{len(level)}}} ", text[start:], re.M)]
    return text[start : start + ends[0]] if ends else text[start:]


def python_blocks(text: str) -> list[str]:
    return re.findall(_PYTHON, text, re.S)


SECURITY = DOCS / "security.md"
# "Connecting to a secured cluster" needs secured listeners: tests/broker/docs/test_security_page.py and
# tests/spark/test_secured.py run those.
SECURED_BLOCKS = python_blocks(section(SECURITY, "## Connecting to a secured cluster"))


def is_spark(block: str) -> bool:
    """The Spark examples work on a session and a DataFrame the reader has; tests/spark runs them."""
    return "df." in block or "(df" in block


def is_share(block: str) -> bool:
    """Share groups (KIP-932): Tansu has none; librdkafka's mock cluster runs those."""
    return "ShareConsumer(" in block


def is_kerberos(block: str) -> bool:
    """Kerberos needs a KDC and a GSSAPI listener: tests/broker/security/test_kerberos.py runs those."""
    return '"GSSAPI"' in block


def is_connect(block: str) -> bool:
    """Spark Connect sessions (a server's artifacts): tests/spark/test_connect.py runs those steps."""
    return "spark.addArtifacts(" in block


def runnable(blocks: list[str]) -> list[str]:
    """The blocks a plain broker runs: not the secured, Spark, Connect, share-group or Kerberos ones."""
    return [
        b
        for b in blocks
        if b not in SECURED_BLOCKS and not (is_spark(b) or is_connect(b) or is_share(b) or is_kerberos(b))
    ]


def all_blocks() -> list[str]:
    return [b for path in [README, *pages()] for b in python_blocks(path.read_text())]


SPARK_BLOCKS = [b for b in all_blocks() if is_spark(b) and b not in SECURED_BLOCKS]
SHARE_BLOCKS = [b for b in all_blocks() if is_share(b)]
KERBEROS_BLOCKS = [b for b in all_blocks() if is_kerberos(b)]
