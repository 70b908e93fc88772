"""How many xdist workers a run of case items gets: as many as can add CPU, no more.

Every pytest process that runs case items runs all of its conversations at once on
its engine (``concurrency`` in flight, shared out among the workers), so a worker
adds no concurrency: it adds a core's worth of CPU for rules, masking and recording,
and costs its start-up (an interpreter, the plugin, a collection of every case file)
and the transport of every result to the controller, which records them one by one
on a core of its own. Measured on two cores (tests/perf/bench.py), ``-n 2`` and
``-n 8`` were slower than one process at every size, with and without a judge:
``-n 8`` took 1.26–1.96× the wall time of ``-n 0`` rules only, because eight
interpreters start on two cores before the first request.

So under ``-n N`` (or ``-n auto``) a run whose every path is a case path starts at most
one worker per usable CPU beyond the controller's, and none at all when that leaves
fewer than two: a single worker is the process's own work plus the transport. The
decision is printed in the header and kept in the run record; ``--agenteval-workers
asked`` starts what ``-n`` asks for. A run with other tests, an explicit ``--tx``, or a
project that does not use the plugin is left exactly as xdist would run it.

Usable CPUs are the ones this process may run on (its affinity, as ``taskset`` and
container cpusets narrow it) and, where a cgroup caps CPU time (a container's
``--cpus``, a Kubernetes limit), no more than that cap, rounded up.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Fit", "fit_workers", "usable_cpus", "workers_for"]


@dataclass(frozen=True)
class Fit:
    """What ``-n`` asked for and what the run starts."""

    asked: str  # as given: "8", "auto", "logical"
    workers: int  # 0: one process
    cpus: int

    def line(self) -> str:
        """The header's line."""
        if self.workers:
            return (f"agenteval: -n {self.asked} on {self.cpus} usable CPUs: {self.workers} "
                    "workers (one per CPU beyond the controller's; --agenteval-workers asked "
                    "starts what -n asks for)")
        return (f"agenteval: -n {self.asked} on {self.cpus} usable CPU(s): running in one "
                "process — every conversation runs concurrently in it anyway, and workers "
                "here would add only their start-up and the transport of results "
                "(--agenteval-workers asked starts them anyway)")


def workers_for(asked: int, cpus: int) -> int:
    """At most one worker per usable CPU beyond the controller's, and none rather than one."""
    n = min(asked, cpus - 1)
    return n if n >= 2 else 0


def usable_cpus(cgroup_root: Path = Path("/sys/fs/cgroup"),
                proc_cgroup: Path = Path("/proc/self/cgroup")) -> int:
    """The CPUs this process may use: its affinity, capped by a cgroup's CPU quota."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        cpus = os.cpu_count() or 1
    quota = _cgroup_quota(cgroup_root, proc_cgroup)
    return max(1, min(cpus, quota) if quota else cpus)


def _cgroup_quota(root: Path, proc_cgroup: Path) -> int | None:
    """The tightest CPU quota over this process's cgroup and its parents (v2 ``cpu.max``,
    v1 ``cpu.cfs_quota_us``/``cpu.cfs_period_us``), in CPUs rounded up; ``None``: none."""
    try:
        lines = proc_cgroup.read_text().splitlines()
    except OSError:
        return None
    best: int | None = None
    for line in lines:
        _, controllers, path = [*line.split(":", 2), "", ""][:3]
        if controllers == "":  # v2: "0::/path"
            base, read = root, _v2_quota
        elif "cpu" in controllers.split(","):
            base, read = root / controllers, _v1_quota
            if not base.is_dir():
                base = root / "cpu"
        else:
            continue
        folder = base / path.lstrip("/")
        while True:
            found = read(folder)
            if found is not None:
                best = found if best is None else min(best, found)
            if folder == base or base not in folder.parents:
                break
            folder = folder.parent
    return best


def _v2_quota(folder: Path) -> int | None:
    try:
        quota, period = (folder / "cpu.max").read_text().split()[:2]
    except (OSError, ValueError):
        return None
    return None if quota == "max" else _cpus(quota, period)


def _v1_quota(folder: Path) -> int | None:
    try:
        quota = (folder / "cpu.cfs_quota_us").read_text().strip()
        period = (folder / "cpu.cfs_period_us").read_text().strip()
    except OSError:
        return None
    return None if quota.startswith("-") else _cpus(quota, period)


def _cpus(quota: str, period: str) -> int | None:
    try:
        q, p = int(quota), int(period)
    except ValueError:
        return None
    return max(1, math.ceil(q / p)) if q > 0 and p > 0 else None


def _cases_only(config: Any, case_roots: tuple[Path, ...]) -> bool:
    """Every path the run collects is a case file or lies in a case folder (explicit args,
    else ``testpaths``, as pytest resolved them into ``config.args``)."""
    base = Path(config.invocation_params.dir)
    args = [str(a) for a in config.args]
    if not args:
        return False
    for arg in args:
        path = (base / arg.split("::", 1)[0]).resolve()
        if path.suffix in (".yaml", ".yml") and path.is_file():
            continue  # a case file named on the command line (the collector takes it)
        if not any(path == r or path.is_relative_to(r) for r in case_roots):
            return False
    return True


def fit_workers(config: Any) -> Fit | None:
    """Size ``-n`` for a run of case items (see the module's docstring); ``None`` when the
    run is left as xdist would run it. Called before xdist reads the option."""
    option = config.option
    asked = getattr(option, "numprocesses", None)
    if not asked or config.getoption("agenteval_workers", None) == "asked":
        return None
    auto = asked in ("auto", "logical")
    if getattr(option, "tx", None) or (auto and config.getoption("usepdb", False)):
        return None  # remote or explicit workers; xdist itself turns -n auto off for --pdb
    from .project import resolved_case_roots

    roots = resolved_case_roots(Path(config.rootpath),
                                [Path(p) for p in config.getini("agenteval_paths")])
    if not _cases_only(config, roots):
        return None
    if auto:
        wanted = int(config.hook.pytest_xdist_auto_num_workers(config=config) or 1)
    else:
        wanted = int(asked)
    cpus = usable_cpus()
    workers = workers_for(wanted, cpus)
    if workers == wanted and not auto:
        return None  # as asked: nothing to say
    option.numprocesses = workers
    return Fit(str(asked), workers, cpus)
