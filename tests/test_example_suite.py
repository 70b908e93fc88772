"""The shipped example suite against the built-in reference agent (the README's main job)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agents import read_record

#: data tests (the shipped example suite): `pytest tests/ -m "not data"` skips them
pytestmark = pytest.mark.data

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def shipped(pytester: pytest.Pytester) -> Path:
    for name in ("cases", "rules"):
        shutil.copytree(ROOT / name, pytester.path / name)
    shutil.copy(ROOT / "agenteval.yaml", pytester.path / "agenteval.yaml")
    pytester.makeini("[pytest]\nagenteval_paths = cases\n"
                     "addopts = -p no:benchmark --agenteval-workers=asked\n")
    return pytester.path


def _known_defects(root: Path) -> set[str]:
    import yaml

    out = set()
    for path in (root / "cases").rglob("*.yaml"):
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        for item in (doc.get("cases") or []) + (doc.get("scenarios") or []):
            if "known_defect" in (item.get("tags") or []):
                out.add(item["id"])
    return out


def test_only_the_documented_defects_fail_and_each_names_its_rule(shipped, pytester) -> None:
    result = pytester.runpytest("cases")
    record = read_record(shipped)
    failed = {c["id"] for c in record["cases"] if c["status"] != "passed"}
    assert failed == _known_defects(shipped) and failed
    assert result.ret == 1
    for case in record["cases"]:
        rows = [r for r in case["rules"] if r["status"] == "failed"]
        if case["status"] == "failed":
            # each defect is caught by a business rule of the ledger, with evidence
            assert any(r["origin"] == "ledger" and r["rule_id"].startswith("BR-") for r in rows)
            assert all(r["rule_id"] and r["evidence"] for r in rows), case["id"]
        else:  # no correct reply of the reference agent is flagged by any rule
            assert rows == [], (case["id"], rows)
    assert record["completeness"]["complete"]


def test_serial_and_parallel_runs_give_the_same_verdicts(shipped, pytester) -> None:
    pytester.runpytest("cases")
    serial = read_record(shipped)
    shutil.rmtree(shipped / "reports")
    pytester.runpytest("cases", "-n", "4")
    parallel = read_record(shipped)

    def verdicts(rec: dict) -> dict:
        return {c["id"]: (c["status"], [r["status"] for r in c["rules"]]) for c in rec["cases"]}

    assert verdicts(parallel) == verdicts(serial)

    def measured_apart(metrics: dict) -> dict:
        # latency is measured, not computed: it differs between any two runs
        return {k: v for k, v in metrics.items() if k != "service"} | {
            "service": {k: v for k, v in metrics["service"].items() if k != "latency_ms"}}

    assert measured_apart(parallel["metrics"]) == measured_apart(serial["metrics"])
    assert parallel["gate"] == serial["gate"]
    assert parallel["gate"]["result"] in ("EXPLORATORY", "BLOCK", "PASS_WITH_RISK", "PASS")


def test_the_record_validates_against_the_printed_schema(shipped, pytester) -> None:
    import json
    import subprocess
    import sys

    import jsonschema

    pytester.runpytest("cases", "-k", "FLOW-LEAD or PHONE_PROVIDED", "--agenteval-repeat", "2")
    record = read_record(shipped)
    printed = subprocess.run([sys.executable, "-m", "pytest_agenteval.cli", "schema", "results"],
                             capture_output=True, text=True, check=True).stdout
    jsonschema.validate(record, json.loads(printed))
    kinds = {(c["kind"], "trial" in c) for c in record["cases"]}
    assert kinds == {("case", True), ("scenario", True)}
