"""The metric-family protocol and its registry.

A family computes one group of metrics (SPEC 6) from the run's item results
into a pydantic model, names the values a release gate may bound, and writes
its lines of the terminal summary. ``results.json`` holds every registered
family under its ``key``; a new family is one module with one registered
class::

    class Latency(Family[LatencyModel]):
        key = "latency"
        model = LatencyModel
        gate = (GateValue("latency_p99_ms", lambda m, g: m.p99),)

        def compute(self, run: RunData) -> LatencyModel: ...

    register(Latency())

A run folds its results as they arrive: each family's :meth:`Family.folder`
takes one item at a time and keeps only what its figures need, so the end of
a run of 10,000 items holds no 10,000 typed results. A family that overrides
only ``compute`` (as above) is given a folder that keeps the items and calls
it at the end; the built-in families fold, and their ``compute`` is the fold
of ``run.items``.

Words used by the families: an item is *evaluated* when its status is not
``error``; it *passed* when its status is ``passed``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict

from .rates import CaseTally, rate_by_case

if TYPE_CHECKING:
    from ..model.gates import GateMetric
    from ..model.results import ItemResult, TurnResult

__all__ = [
    "FAMILIES",
    "Family",
    "Folder",
    "GateValue",
    "PassRate",
    "Rate",
    "RunData",
    "RunMetrics",
    "Wilson",
    "number",
    "pass_rate_of",
    "pct",
    "rate",
    "register",
]

M = TypeVar("M", bound=BaseModel)


class MetricModel(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)


class Wilson(MetricModel):
    """A share in 0..1 with its 95% Wilson interval; ``None`` when ``n`` is 0."""

    value: float | None
    low: float | None
    high: float | None
    n: int


class Rate(Wilson):
    """A share with a 95% interval, clustered by case when a case counts more than once."""

    clusters: int
    n_eff: float | None
    method: Literal["wilson", "clustered"]


class PassRate(Rate):
    """``passed / evaluated`` items, with the item and error counts."""

    items: int
    errors: int


def pct(value: Wilson | float | None) -> str:
    """A share as a percentage, with its interval when it has one; "not evaluated" for None."""
    share = value.value if isinstance(value, Wilson) else value
    if share is None:
        return "not evaluated"
    text = f"{share:.1%}"
    if isinstance(value, Wilson) and value.low is not None and value.high is not None:
        text += f" [{value.low:.0%}–{value.high:.0%}]"
    return text


def number(value: float | None, unit: str = "") -> str:
    return "not evaluated" if value is None else f"{value:.0f}{unit}"


def rate(members: Iterable[tuple[str, float]] | CaseTally) -> Rate:
    """:func:`~.rates.rate_by_case` as a model (of a tally: what it folded)."""
    return Rate(**(members.result() if isinstance(members, CaseTally) else rate_by_case(members)))


def pass_rate_of(members: Sequence[tuple[str, str]]) -> PassRate:
    """``passed / evaluated`` over ``(item id, status)`` pairs (what a folder keeps of an
    item) with its interval, plus the item and error counts."""
    ok = [(cid, status) for cid, status in members if status != "error"]
    return PassRate(items=len(members), errors=len(members) - len(ok),
                    **rate_by_case((cid, float(status == "passed")) for cid, status in ok))


@dataclass(frozen=True)
class RunData:
    """What every family computes from: the item results and the run's context."""

    items: Sequence[ItemResult]
    labels: Sequence[str] | None = None
    red_lines: Sequence[str] | None = None

    def turns(self) -> Iterator[tuple[ItemResult, TurnResult]]:
        for item in self.items:
            for turn in item.turns:
                yield item, turn


@dataclass(frozen=True)
class GateValue(Generic[M]):
    """A value of a family that ``rules/gates.yaml`` may bound, by name.

    ``needs`` says which qualifier the gate entry must give: a ``label`` (per-label
    intent metrics) or ``k`` (pass^k).
    """

    name: str
    read: Callable[[M, GateMetric], float | Wilson | None]
    needs: Literal["label", "k"] | None = None


class Folder(Generic[M]):
    """A family's figures over a run, folded one item at a time.

    ``add`` is called once per item result, in the order they arrive, and keeps
    only what the figures need (counts, a few short tuples), never the item;
    ``result`` is called once, after the last.
    """

    def add(self, item: ItemResult) -> None:
        raise NotImplementedError

    def result(self) -> M:
        raise NotImplementedError


class _Keeping(Folder[M]):
    """The folder of a family that only has ``compute``: it keeps the items."""

    def __init__(self, family: Family[M], run: RunData) -> None:
        self.family, self.run = family, run
        self.items: list[ItemResult] = []

    def add(self, item: ItemResult) -> None:
        self.items.append(item)

    def result(self) -> M:
        return self.family.compute(RunData(self.items, self.run.labels, self.run.red_lines))


class Family(Generic[M]):
    """One family of metrics: ``compute`` (or ``folder``) to a model, gate values by name,
    summary lines."""

    key: ClassVar[str]
    model: ClassVar[type[BaseModel]]
    #: position in the terminal summary (lower first)
    order: ClassVar[int] = 100
    gate: ClassVar[tuple[GateValue[Any], ...]] = ()

    def folder(self, run: RunData) -> Folder[M]:
        """A folder of this family's figures; ``run`` gives the labels and red lines (its
        ``items`` are not known yet). By default it keeps the items for ``compute``."""
        if type(self).compute is Family.compute:
            raise NotImplementedError(f"{type(self).__name__} overrides neither compute "
                                      "nor folder")
        return _Keeping(self, run)

    def compute(self, run: RunData) -> M:
        """The family's model over ``run.items``: by default, their fold."""
        if type(self).folder is Family.folder:
            raise NotImplementedError(f"{type(self).__name__} overrides neither compute "
                                      "nor folder")
        folder = self.folder(RunData((), run.labels, run.red_lines))
        for item in run.items:
            folder.add(item)
        return folder.result()

    def summary(self, value: M, metrics: RunMetrics) -> list[str]:
        """Lines for the terminal summary (none by default)."""
        return []


FAMILIES: dict[str, Family[Any]] = {}


def register(family: Family[M]) -> Family[M]:
    """Register a family instance under its key (a later one of the same key replaces it).

    The built-in families are registered first, so a user's family of the same
    key replaces the built-in one and a new one comes after them.
    """
    from . import builtin  # noqa: F401  (a no-op while builtin itself is importing)

    FAMILIES[family.key] = family
    return family


def load_families() -> dict[str, Family[Any]]:
    """The registered families, the built-in ones first."""
    from . import builtin  # noqa: F401  (registers the built-in families on import)

    return FAMILIES


def gate_values() -> dict[str, GateValue[Any]]:
    """Every gate metric name of every registered family."""
    return {gv.name: gv for fam in load_families().values() for gv in fam.gate}


def gate_family(name: str) -> Family[Any]:
    return next(f for f in load_families().values() if any(g.name == name for g in f.gate))


class RunMetrics:
    """Every family's model for one run; ``metrics[SuccessFamily]`` is typed."""

    def __init__(self, values: dict[str, BaseModel]) -> None:
        self.values = values

    def __getitem__(self, family: type[Family[M]]) -> M:
        value: M = self.values[family.key]  # type: ignore[assignment]
        return value

    def to_json(self) -> dict[str, Any]:
        return {key: value.model_dump(mode="json") for key, value in self.values.items()}

    def gate_value(self, metric: GateMetric) -> float | None:
        """The value a gate entry bounds (``None``: not evaluated in this run)."""
        gv = gate_values()[metric.metric]
        family = gate_family(metric.metric)
        got = gv.read(self.values[family.key], metric)
        if isinstance(got, Wilson):
            got = got.value
        return None if got is None else float(got)
