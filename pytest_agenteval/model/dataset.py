"""The dataset manifest: ``cases/dataset.yaml`` (a case root's ``dataset.yaml``).

It names the dataset and its version, the version it grew from, the case files
that belong to it and the mix the team declared (the share of each test family,
challenge, priority or source the dataset is meant to have). ``agenteval lint``
compares the real mix with the declared one; ``agenteval dataset diff`` proves
that a version keeps every case of its parent; the run record carries the name
and version beside the content hash.

```yaml
name: dealer-im-leads
version: 1.3.0
parent: 1.2.0
description: 二手车商 IM 留资机器人的评测集
files: [single/*.yaml, flows/*.yaml]      # globs under this folder; default: every YAML file
mix:                                     # declared shares, each dimension summing to 1
  test_family: {CORE: 0.55, KNOWLEDGE_BOUNDARY: 0.2, ROBUSTNESS: 0.15, SAFETY: 0.1}
tolerance: 0.05                          # how far a real share may stray (absolute)
```
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = ["MANIFEST_NAME", "DatasetManifest", "MixDimension"]

#: the manifest's file name, directly in a case root (never collected as a case file)
MANIFEST_NAME = "dataset.yaml"
MixDimension = Literal["test_family", "challenge", "priority", "source", "behavior"]
_VERSION = re.compile(r"^[0-9A-Za-z][0-9A-Za-z.\-+_]*$")


class DatasetManifest(BaseModel):
    """``dataset.yaml``: what the dataset is, which version, grown from which, its mix."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    version: str
    #: the version this one grew from (``agenteval dataset diff`` proves it kept its cases)
    parent: str | None = None
    description: str = ""
    #: globs of case files relative to the manifest's folder (default: every YAML file)
    files: list[str] = Field(default_factory=lambda: ["**/*.yaml", "**/*.yml"])
    #: declared shares per dimension, each summing to 1
    mix: dict[MixDimension, dict[str, float]] = Field(default_factory=dict)
    #: how far a real share may stray from the declared one (absolute)
    tolerance: float = Field(default=0.05, ge=0, le=1)

    @field_validator("version", "parent", mode="before")
    @classmethod
    def _text(cls, v: object) -> object:
        return str(v) if isinstance(v, int | float) and not isinstance(v, bool) else v

    @field_validator("version", "parent")
    @classmethod
    def _version_shape(cls, v: str | None) -> str | None:
        if v is not None and not _VERSION.match(v):
            raise ValueError("a version is letters, digits and . - + _ (e.g. 1.3.0)")
        return v

    @field_validator("mix")
    @classmethod
    def _shares(cls, mix: dict[MixDimension, dict[str, float]]
                ) -> dict[MixDimension, dict[str, float]]:
        for dim, shares in mix.items():
            if any(s < 0 or s > 1 for s in shares.values()):
                raise ValueError(f"mix.{dim}: every share is between 0 and 1")
            total = sum(shares.values())
            if abs(total - 1.0) > 1e-6:
                raise ValueError(f"mix.{dim}: the shares sum to {total:g}, not 1")
        return mix

    def case_files(self, folder: Path) -> list[Path]:
        """The case files the manifest names under ``folder`` (itself left out), sorted."""
        found = {p for g in self.files for p in folder.glob(g) if p.is_file()}
        return sorted(p for p in found if p.name != MANIFEST_NAME
                      or p.parent.resolve() != folder.resolve())
