"""pytest-xdist's own remote workers (``--tx socket=HOST:PORT``), on loopback.

Two execnet socket servers stand for two hosts; each item must run exactly once
(the fake agent counts every conversation's first request) and the record must
be complete. Then the case the loopback cannot show: a worker that cannot reach
the controller's link folder (as on another host) still sends no conversation
twice when a worker crashes.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import execnet
import pytest

from agents import CRASHBOT, K01_RUNNING, read_record

SOCKETSERVER = Path(execnet.__file__).parent / "script" / "socketserver.py"

CASES = {
    "a.yaml": "cases:\n" + "".join(f"  - {{id: A-{i:02d}, request: {{input: '你好{i}'}}}}\n"
                                   for i in range(16)),
    "flows/s.yaml": """\
scenarios:
  - id: S-1
    turns: [{input: 一}, {input: 二}, {input: 三}]
  - id: S-2
    turns: [{input: 一}, {input: 二}]
""",
}
ITEMS = sorted([f"A-{i:02d}" for i in range(16)] + ["S-1", "S-2"])


@dataclass(frozen=True)
class Host:
    """A socket server: what ``--tx socket=127.0.0.1:PORT`` connects to."""

    port: int
    home: Path
    log: Path

    def spec(self, chdir: Path | None = None) -> str:
        return f"socket=127.0.0.1:{self.port}" + (f"//chdir={chdir}" if chdir else "")


def _start(home: Path) -> tuple[subprocess.Popen[bytes], Host]:
    log = home / "server.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-u", str(SOCKETSERVER), "127.0.0.1:0"],
                                cwd=home, stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        found = re.search(r"Entering Accept loop \('127\.0\.0\.1', (\d+)\)", log.read_text())
        if found:
            return proc, Host(int(found.group(1)), home, log)
        time.sleep(0.05)
    proc.kill()
    raise AssertionError(f"the socket server did not start: {log.read_text()}")


@pytest.fixture
def hosts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Host]]:
    """Two socket servers, each in a folder of its own (its "host")."""
    started = [_start(tmp_path_factory.mktemp(f"host{i}")) for i in range(2)]
    yield [host for _, host in started]
    for proc, _ in started:
        proc.terminate()
        proc.wait(timeout=30)


def _controller(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest", "-v", "--dist", "load", *args],
                          cwd=root, capture_output=True, text=True, timeout=300, check=False)


def _ran_once_and_complete(done: subprocess.CompletedProcess[str], agent, root: Path) -> None:
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-3000:]
    sends = agent.sends_per_case()
    assert sorted(sends) == ITEMS, out[-3000:]
    assert set(sends.values()) == {1}, sends  # each item ran exactly once
    record = read_record(root)
    assert record["completeness"]["complete"] is True
    assert record["completeness"]["expected"] == len(record["cases"]) == len(ITEMS)
    assert "scheduling tests via DeferredScheduling" in out  # the plugin's owned scheduling
    assert "[gw0]" in out and "[gw1]" in out  # both hosts ran items


def test_socket_workers_on_their_own_checkouts(project: Callable[..., Path], hosts, agent) -> None:
    """The recipe: the project is checked out on each host; ``chdir=`` names the checkout;
    no path arguments (``testpaths`` says where the cases are)."""
    root = project(CASES, ini="testpaths = cases\n")
    checkouts = []
    for host in hosts:
        checkout = host.home / "checkout"
        shutil.copytree(root, checkout)
        checkouts.append(checkout)
    args = [a for host, c in zip(hosts, checkouts, strict=True) for a in ("--tx", host.spec(c))]
    done = _controller(root, *args)
    _ran_once_and_complete(done, agent, root)
    for checkout in checkouts:  # each worker collected from its host's checkout
        assert (checkout / "_pytest").is_dir()  # (xdist copies pytest itself to every host)
        assert not (checkout / "reports").exists()  # only the controller records


def test_socket_workers_with_rsyncdir(project: Callable[..., Path], hosts, agent) -> None:
    """xdist's older recipe: ``--rsyncdir`` copies the project to every host (deprecated by
    xdist 3.x, to be removed in 4.0); path arguments must then be inside an rsync root."""
    root = project(CASES)
    args = [a for host in hosts for a in ("--tx", host.spec())]
    done = _controller(root, str(root / "cases"), *args, "--rsyncdir", str(root))
    _ran_once_and_complete(done, agent, root)
    for host in hosts:
        assert (host.home / "pyexecnetcache" / root.name / "cases" / "a.yaml").is_file()


def test_a_worker_that_cannot_reach_the_link_folder_sends_nothing_twice(pytester) -> None:
    """As on another host: the controller's link folder is not there. gw1 owns K-01, K-03,
    …, runs four at once, and K-05 kills it while K-01, K-03 and K-07 are being answered.
    gw0 cannot read gw1's journal, so it sends none of gw1's leftovers: each is an ERROR
    not_resent, and no conversation reaches the agent twice."""
    pytester.makeini("[pytest]\nagenteval_paths = cases\n"
                     "addopts = -p no:benchmark --agenteval-workers=asked\n")
    pytester.makeconftest("""
import pytest


@pytest.hookimpl(trylast=True)
def pytest_configure_node(node):
    node.workerinput["agenteval_link"] = "/nonexistent/agenteval-link-on-another-host"
""" + K01_RUNNING)
    pytester.makepyfile(crashbot=CRASHBOT)
    pytester.path.joinpath("agenteval.yaml").write_text(
        "target: {adapter: python, callable: 'crashbot:reply', concurrency: 8}\n")
    rows = ["cases:"] + [f"  - {{id: K-{i:02d}, request: {{input: '{'crash' if i == 5 else i}'}}}}"
                         for i in range(12)]
    pytester.mkdir("cases").joinpath("a.yaml").write_text("\n".join(rows) + "\n")
    result = pytester.runpytest_subprocess("cases", "-n", "2")
    assert result.ret == 1
    calls = (pytester.path / "calls.log").read_text().split()
    assert len(calls) == len(set(calls)), calls  # no conversation sent twice
    assert sorted(calls) == [f"K-{i:02d}" for i in (0, 1, 2, 3, 4, 5, 6, 7, 8, 10)]
    record = read_record(pytester.path)
    assert record["completeness"]["missing"] == ["cases/a.yaml::K-01"]
    by_status = {c["id"]: (c["status"], c["error"] and c["error"]["kind"])
                 for c in record["cases"]}
    assert by_status == {
        **{f"K-{i:02d}": ("passed", None) for i in (0, 2, 4, 6, 8, 10)},
        **{f"K-{i:02d}": ("error", "not_resent") for i in (3, 5, 7, 9, 11)}}
    detail = next(c for c in record["cases"] if c["id"] == "K-09")["error"]["detail"]
    # (the worker that got the leftovers: gw0, or gw2 that xdist started in gw1's place)
    assert re.match(r"not sent: worker gw1, which owned this conversation, crashed, and this "
                    r"worker \(gw[02], on another host than the controller\) cannot read its "
                    r"journal", detail), detail


def test_tx_without_n_makes_the_controller(project: Callable[..., Path], pytester, agent) -> None:
    """``--tx … --dist load`` without ``-n`` is distribution too: the plugin takes the
    controller's role (its scheduler, the link), not the single process's."""
    root = project(CASES)
    result = pytester.runpytest("cases", "--tx", "2*popen", "--dist", "load", "-v")
    result.stdout.fnmatch_lines(["*scheduling tests via DeferredScheduling*"])
    assert set(agent.sends_per_case().values()) == {1}
    assert read_record(root)["completeness"]["complete"] is True
