"""The generated named constants agree with the broker error table they come from."""

import importlib.util
from pathlib import Path

from kafkawire.protocol import error_codes
from kafkawire.protocol.error_table import ERROR_CODES

SCRIPT = Path(__file__).resolve().parents[3] / "scripts" / "generate_error_codes.py"


def test_every_code_has_its_constant() -> None:
    for entry in ERROR_CODES:
        assert getattr(error_codes, entry.name) == entry.code


def test_generated_file_is_current() -> None:
    spec = importlib.util.spec_from_file_location("generate_error_codes", SCRIPT)
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    assert Path(error_codes.__file__).read_text() == gen.render()
