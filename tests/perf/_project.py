"""The scratch projects the benchmark runs: the plugin's, and pytest's own no-op floor."""

from __future__ import annotations

from pathlib import Path

__all__ = ["JUDGE_KEY_ENV", "case_input", "turn_input", "write_noop", "write_project"]

JUDGE_MODEL = "bench-judge"
JUDGE_KEY_ENV = "BENCH_JUDGE_KEY"
TURNS = 5
#: two checks a turn, both explicit (no ledger): a keyword rule and a sentence count
_RULES = "[{type: keyword_match, params: {any: [好的]}}, {type: max_sentences, params: {n: 3}}]"
_CASES_PER_FILE = 100
_SCENARIOS_PER_FILE = 20


def case_input(i: int) -> str:
    return f"你好{i}"


def turn_input(s: int, t: int) -> str:
    return f"场景{s}第{t + 1}轮"


def _config(url: str, concurrency: int, judge_url: str | None) -> str:
    text = f"target: {{adapter: http, url: '{url}', concurrency: {concurrency}, timeout_s: 30}}\n"
    if judge_url is not None:
        text += (f"judge: {{model: {JUDGE_MODEL}, base_url: '{judge_url}', api_key_env: "
                 f"{JUDGE_KEY_ENV}, concurrency: {concurrency}, output_mode: json_schema, "
                 "cache: null, timeout_s: 30}\n")
    return text


def _case_files(root: Path, cases: int) -> None:
    for f in range(0, cases, _CASES_PER_FILE):
        rows = ["cases:"]
        for i in range(f, min(cases, f + _CASES_PER_FILE)):
            rows.append(f"  - {{id: BENCH-{i:05d}, request: {{input: {case_input(i)}}}, "
                        f"rules: {_RULES}}}")
        path = root / "cases" / f"bench_{f // _CASES_PER_FILE:03d}.yaml"
        path.write_text("\n".join(rows) + "\n", encoding="utf-8")


def _scenario_files(root: Path, scenarios: int) -> None:
    for f in range(0, scenarios, _SCENARIOS_PER_FILE):
        rows = ["scenarios:"]
        for s in range(f, min(scenarios, f + _SCENARIOS_PER_FILE)):
            rows.append(f"  - id: FLOW-{s:05d}")
            rows.append("    turns:")
            rows += [f"      - {{input: {turn_input(s, t)}, rules: {_RULES}}}"
                     for t in range(TURNS)]
        path = root / "cases" / f"flows_{f // _SCENARIOS_PER_FILE:03d}.yaml"
        path.write_text("\n".join(rows) + "\n", encoding="utf-8")


def write_project(root: Path, url: str, cases: int, scenarios: int, concurrency: int,
                  judge_url: str | None) -> None:
    """A project of ``cases`` single-turn cases and ``scenarios`` five-turn scenarios."""
    (root / "cases").mkdir(parents=True)
    (root / "pytest.ini").write_text("[pytest]\nagenteval_paths = cases\n")
    (root / "agenteval.yaml").write_text(_config(url, concurrency, judge_url))
    _case_files(root, cases)
    _scenario_files(root, scenarios)


def write_noop(root: Path, items: int) -> None:
    """pytest's own floor: ``items`` parametrized no-op tests, no agenteval.yaml (the plugin
    stays inert). Each process that ran tests writes when its last one ran to
    ``last-<pid>.txt`` (``time.perf_counter``: the benchmark's clock), for pytest's own
    tail from the last test to the exit."""
    root.mkdir(parents=True)
    (root / "pytest.ini").write_text("[pytest]\n")
    (root / "test_noop.py").write_text(
        "import time\n\nimport pytest\n\nLAST = [0.0]\n\n\n"
        f"@pytest.mark.parametrize('i', range({items}))\n"
        "def test_noop(i):\n    LAST[0] = time.perf_counter()\n")
    (root / "conftest.py").write_text(
        "import os\nimport sys\n\n\n"
        "def pytest_sessionfinish(session):\n"
        "    mod = sys.modules.get('test_noop')\n"
        "    if mod is not None and mod.LAST[0]:\n"
        "        with open(f'last-{os.getpid()}.txt', 'w') as f:\n"
        "            f.write(repr(mod.LAST[0]))\n")
