"""A ledger for another business (a mobile carrier) needs the generic rule types only."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agents import by_id, read_record

#: data tests (a carrier's ledger and bot): `pytest tests/ -m "not data"` skips them
pytestmark = pytest.mark.data

TELECOM = Path(__file__).resolve().parent / "telecom"


def test_a_carrier_ledger_written_without_code(pytester: pytest.Pytester) -> None:
    for name in ("rules", "cases"):
        shutil.copytree(TELECOM / name, pytester.path / name)
    shutil.copy(TELECOM / "bot.py", pytester.path / "bot.py")
    pytester.makeini("[pytest]\nagenteval_paths = cases\n"
                     "addopts = -p no:benchmark --agenteval-workers=asked\n")
    pytester.path.joinpath("agenteval.yaml").write_text(
        "target: {adapter: python, callable: 'bot:reply'}\n")
    examples = pytester.runpytest("rules", "-q")
    assert examples.ret == 0 and examples.parseoutcomes()["passed"] == 18
    run = pytester.runpytest("cases")
    run.assert_outcomes(passed=3, failed=1)
    cases = by_id(read_record(pytester.path))
    failed = [r for r in cases["TEL-FEE-002"]["rules"] if r["status"] == "failed"]
    assert [(r["rule_id"], r["evidence"]) for r in failed] == [("TEL-001", "放心，一定送您10G流量")]
    assert {r["rule_id"] for r in cases["TEL-CANCEL-001"]["rules"]} == {"TEL-001", "TEL-002",
                                                                        "TEL-003"}
