"""``agenteval calibrate ANCHORS.yaml``: how far the judge agrees with human scores.

Every anchor is a reply that people scored on the seven dimensions. The judge
scores each anchor exactly as it scores a run's turn (same rubric, same
prompt, same cache); per dimension the command prints:

- ``n``: anchors that both the people and the judge scored (neither null);
- ``kappa``: quadratic-weighted Cohen's kappa over the scores 1–5
  (scikit-learn's ``cohen_kappa_score(weights="quadratic", labels=[1..5])``);
- ``spearman``: Spearman's rank correlation (scipy);
- ``exact`` and ``±1``: the share of anchors where the judge's score equals the
  human one, or is within one point;
- ``null≠``: anchors where one side said "not applicable" and the other scored;
- the 5×5 confusion of scores (rows: human 1..5, columns: judge 1..5).

A dimension whose kappa is below ``--threshold`` (default 0.6), or that has
fewer than ``--min-n`` scored anchors, is flagged *unfit to gate on*: a gate on
``judge_mean`` then rests on a judge that people do not agree with.
"""

from __future__ import annotations

import asyncio
import json
import math
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from ..model.cases import DIMENSIONS, HistoryItem, JudgeDimension, Strict

if TYPE_CHECKING:
    from ..model.results import JudgeResult
    from ..project import Project

__all__ = ["AnchorsFile", "DimensionAgreement", "agreement", "calibrate", "load_anchors"]

SCORES = (1, 2, 3, 4, 5)


class Anchor(Strict):
    id: str
    note: str = ""
    input: str
    history: list[HistoryItem] = Field(default_factory=list)
    knowledge: dict[str, Any] | None = None
    expected_behavior: str | None = None
    reply: str
    scores: dict[JudgeDimension, int | None]
    fact_risk: bool | None = None


class AnchorsFile(Strict):
    version: Literal[1] = 1
    anchors: list[Anchor] = Field(min_length=1)


def load_anchors(path: Path, rootdir: Path) -> AnchorsFile:
    """Raises a located ``SourceError``/``MultiSourceError``."""
    from ..model import validate_at
    from ..yamlio import SourceError, load_yaml, locate

    doc = load_yaml(path, locate(path, rootdir))
    spec = validate_at(AnchorsFile, doc.data, doc)
    seen: set[str] = set()
    for i, a in enumerate(spec.anchors):
        if a.id in seen:
            raise SourceError(doc.at(("anchors", i, "id")), f"duplicate anchor id {a.id!r}",
                              "id")
        seen.add(a.id)
        bad = [d for d, s in a.scores.items() if s is not None and s not in SCORES]
        if bad:
            raise SourceError(doc.at(("anchors", i, "scores", bad[0])),
                              "a human score is an integer 1-5, or null", f"scores.{bad[0]}")
    return spec


@dataclass(frozen=True)
class DimensionAgreement:
    dimension: str
    n: int
    kappa: float | None
    spearman: float | None
    exact: float | None
    within_one: float | None
    null_disagree: int
    confusion: list[list[int]]
    fit: bool
    why_unfit: str


def _finite(x: float) -> float | None:
    return None if x is None or math.isnan(x) else round(float(x), 3)


def agreement(dim: str, pairs: list[tuple[int | None, int | None]], threshold: float,
              min_n: int) -> DimensionAgreement:
    """Agreement on one dimension from ``(human, judge)`` pairs (``None``: not applicable)."""
    from scipy.stats import spearmanr
    from sklearn.metrics import cohen_kappa_score, confusion_matrix

    both = [(h, j) for h, j in pairs if h is not None and j is not None]
    null_disagree = sum(1 for h, j in pairs if (h is None) != (j is None))
    human = [h for h, _ in both]
    judge = [j for _, j in both]
    kappa = spearman = exact = near = None
    confusion = [[0] * 5 for _ in SCORES]
    if both:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # constant input: kappa/rho undefined → None
            kappa = _finite(cohen_kappa_score(human, judge, weights="quadratic",
                                              labels=list(SCORES)))
            spearman = _finite(spearmanr(human, judge).statistic) if len(both) > 2 else None
        exact = round(sum(h == j for h, j in both) / len(both), 3)
        near = round(sum(abs(h - j) <= 1 for h, j in both) / len(both), 3)
        confusion = confusion_matrix(human, judge, labels=list(SCORES)).tolist()
    why = ""
    if len(both) < min_n:
        why = f"only {len(both)} scored anchor(s) (need {min_n})"
    elif kappa is None:
        why = "kappa undefined (people and judge give one and the same score throughout)"
    elif kappa < threshold:
        why = f"kappa {kappa:.2f} < {threshold:g}"
    return DimensionAgreement(dim, len(both), kappa, spearman, exact, near, null_disagree,
                              confusion, not why, why)


async def _judge_all(project: Project, spec: AnchorsFile,
                     use_cache: bool) -> list[JudgeResult]:
    from ..rules._registry import TurnView
    from .service import Judge, TurnContext

    cfg = project.judge_config
    assert cfg is not None
    judge = Judge.from_config(cfg, project.rubric, project.taxonomy, project.rootdir, use_cache)
    try:
        views = [TurnView(input=a.input, reply=a.reply,
                          history=[h.model_dump() for h in a.history],
                          knowledge=a.knowledge, expected_behavior=a.expected_behavior)
                 for a in spec.anchors]
        return list(await asyncio.gather(*(
            judge.turn(v, TurnContext(behavior=a.expected_behavior))
            for v, a in zip(views, spec.anchors, strict=True))))
    finally:
        await judge.aclose()


def calibrate(project: Project, path: Path, threshold: float = 0.6, min_n: int = 5,
              use_cache: bool = True, json_out: Path | None = None) -> int:
    """Judge the anchors, print the agreement table; 0 when every dimension is fit to gate
    on, 1 when one is not (2: the anchors or the judge cannot be used)."""
    spec = load_anchors(path, project.rootdir)
    results = asyncio.run(_judge_all(project, spec, use_cache))
    failed = [(a.id, r) for a, r in zip(spec.anchors, results, strict=True) if not r.judged]
    rows = []
    for dim in DIMENSIONS:
        pairs = [(a.scores.get(dim), (r.scores or {}).get(dim))
                 for a, r in zip(spec.anchors, results, strict=True)
                 if r.judged and dim in a.scores]
        rows.append(agreement(dim, pairs, threshold, min_n))
    risk = [(a.fact_risk, r.fact_risk) for a, r in zip(spec.anchors, results, strict=True)
            if r.judged and a.fact_risk is not None]
    risk_agree = round(sum(h == j for h, j in risk) / len(risk), 3) if risk else None
    _print(project, path, spec, rows, failed, risk_agree, len(risk), threshold)
    if json_out is not None:
        json_out.write_text(json.dumps({
            "anchors": str(path), "judged": len(results) - len(failed),
            "not_evaluated": {aid: r.reason for aid, r in failed},
            "threshold": threshold, "min_n": min_n,
            "rubric_sha256": project.rubric.sha256,
            "model": project.judge_config.model if project.judge_config else None,
            "fact_risk_agreement": risk_agree,
            "dimensions": [row.__dict__ for row in rows]}, ensure_ascii=False, indent=2),
            encoding="utf-8")
    return 0 if all(row.fit for row in rows) else 1


def _fmt(x: float | None) -> str:
    return "  n/a" if x is None else f"{x:5.2f}"


def _print(project: Project, path: Path, spec: AnchorsFile, rows: list[DimensionAgreement],
           failed: list[tuple[str, JudgeResult]], risk_agree: float | None, risk_n: int,
           threshold: float) -> None:
    cfg = project.judge_config
    print(f"calibration of judge {cfg.model if cfg else '?'} on {path} "
          f"({len(spec.anchors)} anchors, rubric {project.rubric.sha256[:12]})")
    if failed:
        print(f"not evaluated: {len(failed)} anchor(s): "
              + "; ".join(f"{aid}: {r.reason}" for aid, r in failed[:5]))
    head = f"{'dimension':<22}{'n':>4}{'kappa':>8}{'spearman':>10}{'exact':>8}{'±1':>7}" \
           f"{'null≠':>7}  verdict"
    print(head)
    print("-" * len(head))
    for row in rows:
        verdict = "fit to gate on" if row.fit else f"UNFIT to gate on: {row.why_unfit}"
        print(f"{row.dimension:<22}{row.n:>4}   {_fmt(row.kappa)}     {_fmt(row.spearman)}"
              f"   {_fmt(row.exact)}  {_fmt(row.within_one)}{row.null_disagree:>7}  {verdict}")
    print(f"fact_risk agreement: {_fmt(risk_agree)} over {risk_n} anchor(s)")
    print(f"\nconfusion of scores (rows: human 1-5, columns: judge 1-5; kappa threshold "
          f"{threshold:g}):")
    for row in rows:
        cells = " | ".join(" ".join(f"{c:>2}" for c in line) for line in row.confusion)
        print(f"  {row.dimension:<20} {cells}")
