"""A subprocess measured as a tree: CPU over time, peak RSS of it and all its descendants.

:func:`measured` starts one command and, until it exits, samples every 50 ms:

* the **CPU** of the tree from ``/proc/<pid>/stat``: the root's ``utime + stime +
  cutime + cstime`` (its reaped children are folded into the last two) plus the same
  of every live descendant — so an xdist worker counts while it runs and after it
  is reaped;
* the **RSS** of the tree: ``VmRSS`` of ``/proc/<pid>/status`` summed over the root and
  every descendant found through ``/proc/<pid>/task/*/children``.

A waiter thread takes the exit time the moment ``wait()`` returns; the total CPU
is ``resource.getrusage(RUSAGE_CHILDREN)`` after minus before (exact; the sampled
series only splits it in time: before the first request, in the window, after).
Only one command may run at a time, or ``RUSAGE_CHILDREN`` mixes them.

**Foreign CPU**: the machine's busy time (``/proc/stat``) during the run, less the
tree's CPU and this process's own (the servers run here). Other people's work on
the same machine shows there; :func:`wait_quiet` waits for it to stop before a run.
"""

from __future__ import annotations

import bisect
import os
import resource
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Measured", "foreign_cpu", "measured", "wait_quiet"]

_TICK = os.sysconf("SC_CLK_TCK")
_PERIOD_S = 0.05


@dataclass
class Measured:
    """One run of a command: times are ``time.perf_counter()`` values."""

    returncode: int
    started: float
    exited: float
    cpu_s: float  # user + sys of the whole tree, from RUSAGE_CHILDREN
    peak_rss_mb: float  # the largest sum of VmRSS over the tree in any sample
    peak_procs: int  # the most processes in the tree in any sample
    foreign_s: float  # CPU seconds that neither the tree nor this process spent
    times: list[float] = field(default_factory=list)  # sample times
    cpus: list[float] = field(default_factory=list)  # tree CPU seconds at each sample

    @property
    def wall(self) -> float:
        return self.exited - self.started

    def cpu_at(self, t: float) -> float:
        """The tree's CPU seconds at time ``t`` (the last sample at or before it)."""
        i = bisect.bisect_right(self.times, t) - 1
        return self.cpus[i] if i >= 0 else 0.0


def _busy_s() -> float:
    """CPU seconds the whole machine has been busy (all but idle and iowait)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    return (sum(fields) - fields[3] - fields[4]) / _TICK


def _own_s() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    return me.ru_utime + me.ru_stime


def foreign_cpu(seconds: float = 1.0) -> float:
    """Cores' worth of CPU that other processes used over ``seconds`` (none run here)."""
    busy, own = _busy_s(), _own_s()
    time.sleep(seconds)
    return max(0.0, (_busy_s() - busy) - (_own_s() - own)) / seconds


def wait_quiet(limit: float = 0.15, patience_s: float = 3600.0) -> float:
    """Wait (checking each second) until other processes use under ``limit`` of a core;
    returns the seconds waited."""
    t0 = time.perf_counter()
    while foreign_cpu() > limit and time.perf_counter() - t0 < patience_s:
        pass
    return time.perf_counter() - t0


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tasks:
        try:
            out += [int(c) for c in Path(f"/proc/{pid}/task/{tid}/children").read_text().split()]
        except OSError:
            pass
    return out


def _tree(root: int) -> list[int]:
    pids, todo = [], [root]
    while todo:
        pid = todo.pop()
        pids.append(pid)
        todo += _children(pid)
    return pids


def _cpu_ticks(pid: int) -> int:
    """utime + stime + cutime + cstime (fields 14–17 of ``stat``, after the command)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(x) for x in fields[11:15])


def _rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0  # a zombie has no VmRSS


def _sample(root: int) -> tuple[float, int, int] | None:
    """(CPU seconds, RSS kB, processes) of the tree, or None once the root is gone."""
    ticks = rss = n = 0
    for pid in _tree(root):
        try:
            ticks += _cpu_ticks(pid)
            rss += _rss_kb(pid)
            n += 1
        except OSError:
            if pid == root:
                return None
    return ticks / _TICK, rss, n


def _waiter(proc: subprocess.Popen[bytes], box: list[float], done: threading.Event) -> None:
    proc.wait()
    box.append(time.perf_counter())
    done.set()


def measured(argv: list[str], cwd: Path, env: dict[str, str], out: Path) -> Measured:
    """Run ``argv`` (stdout and stderr to ``out``), sampling its tree until it exits."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    busy, own = _busy_s(), _own_s()
    exited: list[float] = []
    done = threading.Event()
    with out.open("wb") as sink:
        started = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=sink, stderr=subprocess.STDOUT)
        threading.Thread(target=_waiter, args=(proc, exited, done), daemon=True).start()
        times, cpus, peak, procs = [], [], 0, 0
        while not done.wait(_PERIOD_S):
            s = _sample(proc.pid)
            if s is None:
                continue
            times.append(time.perf_counter())
            cpus.append(s[0])
            peak, procs = max(peak, s[1]), max(procs, s[2])
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    foreign = max(0.0, (_busy_s() - busy) - cpu - (_own_s() - own))
    return Measured(proc.returncode, started, exited[0], cpu, peak / 1024, procs, foreign,
                    times, cpus)
