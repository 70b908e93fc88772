"""``-n`` for a run of case items: the xdist workers that can add CPU, and no more."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_agenteval import _sizing
from pytest_agenteval._sizing import usable_cpus, workers_for

from agents import read_record


@pytest.mark.parametrize(("asked", "cpus", "workers"), [
    (8, 2, 0),    # two CPUs: the controller's and one more: one process
    (2, 2, 0),
    (1, 8, 0),    # a lone worker is the process's work plus the transport
    (8, 3, 2),
    (8, 4, 3),
    (2, 8, 2),    # as asked
    (8, 16, 8),
    (16, 8, 7),
])
def test_one_worker_per_cpu_beyond_the_controllers_and_none_rather_than_one(
        asked: int, cpus: int, workers: int) -> None:
    assert workers_for(asked, cpus) == workers


def _cgroup(tmp_path: Path, lines: str, files: dict[str, str]) -> tuple[Path, Path]:
    root = tmp_path / "cgroup"
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    proc = tmp_path / "proc-self-cgroup"
    proc.write_text(lines)
    return root, proc


def test_a_cgroup_v2_cap_of_a_parent_counts_rounded_up(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(16)))
    root, proc = _cgroup(tmp_path, "0::/kubepods/pod1/ctr\n", {
        "kubepods/pod1/cpu.max": "150000 100000\n",   # 1.5 CPUs → 2
        "kubepods/pod1/ctr/cpu.max": "max 100000\n",
        "kubepods/cpu.max": "800000 100000\n",
    })
    assert usable_cpus(root, proc) == 2


def test_a_cgroup_v1_cpu_quota(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(16)))
    root, proc = _cgroup(tmp_path, "4:memory:/docker/x\n3:cpu,cpuacct:/docker/x\n", {
        "cpu,cpuacct/docker/x/cpu.cfs_quota_us": "300000\n",
        "cpu,cpuacct/docker/x/cpu.cfs_period_us": "100000\n",
    })
    assert usable_cpus(root, proc) == 3


def test_no_cap_leaves_the_affinity(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3, 4, 5})
    root, proc = _cgroup(tmp_path, "0::/\n3:cpu,cpuacct:/\n", {
        "cpu.max": "max 100000\n",
        "cpu,cpuacct/cpu.cfs_quota_us": "-1\n", "cpu,cpuacct/cpu.cfs_period_us": "100000\n",
    })
    assert usable_cpus(root, proc) == 6
    assert usable_cpus(tmp_path / "none", tmp_path / "no-such-file") == 6
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})  # taskset -c 0
    assert usable_cpus(root, proc) == 1


def _cases(n: int) -> str:
    return "cases:\n" + "".join(f"  - {{id: C-{i:02d}, request: {{input: 你好{i}}}}}\n"
                                for i in range(n))


@pytest.fixture
def cpus(monkeypatch: pytest.MonkeyPatch):
    """The usable CPUs the (in-process) controller sees."""
    def set_to(n: int) -> None:
        monkeypatch.setattr(_sizing, "usable_cpus", lambda: n)
    return set_to


def test_n8_on_two_cpus_runs_in_one_process(project, pytester, agent, cpus) -> None:
    cpus(2)
    project({"a.yaml": _cases(12)})
    result = pytester.runpytest("cases", "-n", "8", "--agenteval-workers", "fit")
    result.assert_outcomes(passed=12)
    result.stdout.fnmatch_lines(["agenteval: -n 8 on 2 usable CPU(s): running in one process*"])
    assert "created:" not in result.stdout.str()
    assert set(agent.sends_per_case().values()) == {1}
    options = read_record(pytester.path)["run"]["options"]
    assert (options["numprocesses"], options["numprocesses_asked"], options["workers"]) == (
        0, "8", "fit")


def test_n8_on_four_cpus_starts_three_workers(project, pytester, agent, cpus) -> None:
    cpus(4)
    project({"a.yaml": _cases(12)})
    result = pytester.runpytest("cases", "-n", "8", "--agenteval-workers", "fit")
    result.assert_outcomes(passed=12)
    result.stdout.fnmatch_lines(["agenteval: -n 8 on 4 usable CPUs: 3 workers*",
                                 "*created: 3/3 workers*"])
    assert set(agent.sends_per_case().values()) == {1}


def test_n_auto_is_fitted_too(project, pytester, agent, cpus, monkeypatch) -> None:
    cpus(4)
    monkeypatch.setenv("PYTEST_XDIST_AUTO_NUM_WORKERS", "8")
    project({"a.yaml": _cases(6)})
    result = pytester.runpytest("cases", "-n", "auto", "--agenteval-workers", "fit")
    result.stdout.fnmatch_lines(["agenteval: -n auto on 4 usable CPUs: 3 workers*",
                                 "*created: 3/3 workers*"])


def test_asked_starts_what_n_asks_for(project, pytester, agent, cpus) -> None:
    cpus(2)
    project({"a.yaml": _cases(6)})
    result = pytester.runpytest("cases", "-n", "2", "--agenteval-workers", "asked")
    result.stdout.fnmatch_lines(["*created: 2/2 workers*"])
    assert "agenteval: -n" not in result.stdout.str()
    assert read_record(pytester.path)["run"]["options"]["numprocesses_asked"] is None


def test_a_run_with_other_tests_is_left_as_xdist_runs_it(project, pytester, agent,
                                                         cpus) -> None:
    """Python tests may want the workers: a run that collects anything beside case paths
    gets what ``-n`` asks for (as does --tx, naming its workers itself)."""
    cpus(2)
    project({"a.yaml": _cases(6)})
    pytester.makepyfile(test_other="def test_other():\n    pass\n")
    result = pytester.runpytest("cases", "test_other.py", "-n", "2", "--agenteval-workers",
                                "fit")
    result.assert_outcomes(passed=7)
    result.stdout.fnmatch_lines(["*created: 2/2 workers*"])
    assert "agenteval: -n" not in result.stdout.str()


def test_a_case_file_named_on_the_command_line_is_a_case_run(project, pytester, agent,
                                                             cpus) -> None:
    cpus(2)
    project({"a.yaml": _cases(3)})
    result = pytester.runpytest("cases/a.yaml::C-01", "-n", "2", "--agenteval-workers", "fit")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["agenteval: -n 2 on 2 usable CPU(s): running in one process*"])


def test_the_option_is_refused_where_the_plugin_is_not_used(pytester) -> None:
    pytester.makeini("[pytest]\naddopts = -p no:benchmark\n")
    pytester.makepyfile(test_plain="def test_plain():\n    pass\n")
    result = pytester.runpytest("--agenteval-workers", "fit")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--agenteval-workers given, but this project does not use*"])
