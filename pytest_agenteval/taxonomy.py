"""The behaviour taxonomy (``rules/taxonomy.yaml``): labels and the intent map."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import Field

from .model import validate_at
from .model.cases import Strict
from .yamlio import SourceError, load_yaml, locate

__all__ = ["UNKNOWN", "Taxonomy", "load_taxonomy"]

UNKNOWN = "UNKNOWN"


class LabelSpec(Strict):
    strategy: str = ""
    codes: list[int | str] = Field(default_factory=list)
    names: list[str] = Field(default_factory=list)


class TaxonomyFile(Strict):
    labels: dict[str, LabelSpec]


@dataclass(frozen=True)
class Taxonomy:
    """Maps what the API returns to a label; unmapped returns are ``UNKNOWN``."""

    labels: tuple[str, ...] = ()
    by_code: dict[str, str] = field(default_factory=dict)
    by_name: dict[str, str] = field(default_factory=dict)
    strategies: dict[str, str] = field(default_factory=dict)
    source: str | None = None

    def predict(self, code: Any, name: str | None) -> str | None:
        """The predicted label, ``UNKNOWN``, or None when the API returned no intent."""
        if code is None and not name:
            return None
        if code is not None and str(code).strip() in self.by_code:
            return self.by_code[str(code).strip()]
        if name:
            key = name.strip()
            if key in self.by_name:
                return self.by_name[key]
            if key in self.labels or self.source is None:
                return key  # a label's own name maps to itself
        return UNKNOWN

    def to_json(self) -> dict[str, Any]:
        return {"labels": list(self.labels), "source": self.source}


def load_taxonomy(path: Path, rootdir: Path) -> Taxonomy:
    """Load the taxonomy; a missing file gives an empty one (labels from the cases)."""
    if not path.is_file():
        return Taxonomy()
    doc = load_yaml(path, locate(path, rootdir))
    spec = validate_at(TaxonomyFile, doc.data, doc)
    by_code: dict[str, str] = {}
    by_name: dict[str, str] = {}
    for label, ls in spec.labels.items():
        by_name[label] = label
        for code in ls.codes:
            if str(code) in by_code:
                raise SourceError(doc.at(("labels", label, "codes")),
                                  f"code {code} already maps to {by_code[str(code)]}",
                                  f"labels.{label}.codes")
            by_code[str(code)] = label
        for n in ls.names:
            by_name[n] = label
    return Taxonomy(tuple(spec.labels), by_code, by_name,
                    {k: v.strategy for k, v in spec.labels.items()}, doc.file)
