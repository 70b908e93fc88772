"""The dataset manifest (cases/dataset.yaml) and the review and version fields of a case."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from pytest_agenteval.model.cases import Case
from pytest_agenteval.model.dataset import DatasetManifest
from pytest_agenteval.project import load_manifest

from agents import read_record

ROOT = Path(__file__).resolve().parent.parent

MANIFEST = """\
name: demo
version: 2
parent: 1
mix:
  test_family: {CORE: 1.0}
"""


def test_the_shipped_manifest_loads_and_names_its_files() -> None:
    manifest = load_manifest(ROOT / "cases" / "dataset.yaml", ROOT)
    assert manifest.name == "dealer-im-leads" and manifest.parent
    files = manifest.case_files(ROOT / "cases")
    assert files and all(f.name != "dataset.yaml" for f in files)
    assert {f.parent.name for f in files} == {"single", "flows"}


def test_a_manifest_is_not_a_case_file_and_the_record_names_the_dataset(project,
                                                                        pytester) -> None:
    root = project({"a.yaml": "cases:\n  - {id: A-1, request: {input: 你好}}\n",
                    "dataset.yaml": MANIFEST})
    result = pytester.runpytest("cases")
    result.assert_outcomes(passed=1)
    dataset = read_record(root)["run"]["dataset"]
    assert (dataset["name"], dataset["version"], dataset["parent"]) == ("demo", "2", "1")
    assert dataset["manifest"] == "cases/dataset.yaml"
    assert [f["path"] for f in dataset["files"]] == ["cases/a.yaml"]


def test_a_broken_manifest_is_named_with_its_line(tmp_path: Path) -> None:
    from pytest_agenteval.config import ConfigError

    path = tmp_path / "dataset.yaml"
    path.write_text("name: demo\nversion: 1\nmix:\n  test_family: {CORE: 0.5, SAFETY: 0.2}\n",
                    encoding="utf-8")
    with pytest.raises(ConfigError, match=r"dataset.yaml:3.*mix.test_family: the shares sum "
                                          r"to 0.7, not 1"):
        load_manifest(path, tmp_path)


@pytest.mark.parametrize("bad", [{"version": "1.0 beta"}, {"tolerance": 2},
                                 {"mix": {"color": {"red": 1.0}}}])
def test_a_manifest_refuses_what_it_cannot_mean(bad: dict) -> None:
    with pytest.raises(ValidationError):
        DatasetManifest.model_validate({"name": "d", "version": "1", **bad})


def test_a_case_carries_its_reviewer_date_version_and_change_reason() -> None:
    case = Case.model_validate({"id": "A-1", "request": {"input": "你好"},
                                "review_status": "reviewed", "reviewed_by": "王工",
                                "reviewed_at": "2026-11-30", "version": 3,
                                "change_reason": "知识里的里程更新了"})
    assert (case.version, case.reviewed_by) == ("3", "王工")
    with pytest.raises(ValidationError, match="reviewed_at"):
        Case.model_validate({"id": "A-1", "request": {"input": "x"}, "reviewed_at": "30.11."})
