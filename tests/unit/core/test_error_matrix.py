"""docs/errors.md is the matrix of every error policy (error code x request family -> meaning), and
every error table is a `Policy` (issue 50: one error-policy form)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from kafkawire.core import (
    consumer_group,
    fetch_session,
    group,
    idempotence,
    share_group,
    share_session,
    telemetry,
    transactions,
)
from kafkawire.core.policy import Action, ErrorPolicy, Meanings, Policy
from kafkawire.protocol import error_codes as ec

SCRIPT = Path(__file__).resolve().parents[3] / "scripts" / "generate_error_matrix.py"


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("generate_error_matrix", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_published_matrix_is_the_tables() -> None:
    generator = _generator()
    assert generator.PAGE.read_text() == generator.matrix(), "run scripts/generate_error_matrix.py"


def test_every_family_table_is_a_policy() -> None:
    tables = [
        group.VERDICTS,
        consumer_group.VERDICTS,
        share_group.VERDICTS,
        share_session.VERDICTS,
        fetch_session.AFTER_ERROR,
        telemetry.PUSH_ERRORS,
        telemetry.SUBSCRIPTION_ERRORS,
        transactions.FAILURES,
        idempotence.INIT_ERRORS,
    ]
    found = {id(p) for _, p in _generator().policies()}
    for table in tables:
        assert isinstance(table, Policy) and id(table) in found, table


def test_a_listed_code_means_its_entry_and_any_other_the_default() -> None:
    verdicts = Meanings("family", {ec.NOT_COORDINATOR: Action.REFIND_COORDINATOR}, Action.FAIL)
    assert verdicts.meaning(ec.NOT_COORDINATOR) is Action.REFIND_COORDINATOR
    assert verdicts.meaning(ec.UNKNOWN_SERVER_ERROR) is Action.FAIL
    assert dict(verdicts) == {ec.NOT_COORDINATOR: Action.REFIND_COORDINATOR} and ec.NOT_COORDINATOR in verdicts
    assert verdicts.otherwise() == "FAIL"
    policy = ErrorPolicy("family", {ec.NOT_COORDINATOR: Action.REFIND_COORDINATOR})
    assert policy.meaning(ec.REQUEST_TIMED_OUT) is Action.RETRY  # unlisted: Kafka's retriable flag
    assert policy.meaning(ec.UNKNOWN_SERVER_ERROR) is Action.FAIL
    keeps_asking = ErrorPolicy("lookup", {}, local=Action.RETRY, final=Action.RETRY)
    assert keeps_asking.meaning(ec.GROUP_AUTHORIZATION_FAILED) is Action.RETRY
    assert keeps_asking.otherwise() == "retriable: RETRY, else RETRY; local: RETRY"
