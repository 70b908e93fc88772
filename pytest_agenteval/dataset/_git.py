"""A folder as a git revision has it: ``agenteval dataset diff HEAD~1:cases cases``."""

from __future__ import annotations

import io
import os
import subprocess
import tarfile
from pathlib import Path

__all__ = ["UsageError", "from_git"]


class UsageError(Exception):
    """A side of a diff cannot be read at all (exit 2)."""


def _git(cwd: Path, *args: str) -> bytes:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False)
    except OSError as exc:
        raise UsageError(f"git cannot be run: {exc}") from None
    if done.returncode != 0:
        raise UsageError(f"git {' '.join(args)}: "
                         + done.stderr.decode(errors="replace").strip())
    return done.stdout


def from_git(rev: str, path: str, cwd: Path, into: Path) -> Path:
    """``path`` (relative to ``cwd``) as revision ``rev`` has it, extracted under ``into``
    (which then holds it at its path in the repository), with ``git archive``.

    Raises:
        UsageError: not in a git repository, no such revision, or no such path in it.
    """
    top = Path(_git(cwd, "rev-parse", "--show-toplevel").decode().strip())
    rel = Path(os.path.relpath((cwd / path).resolve(), top.resolve())).as_posix()
    data = _git(top, "archive", "--format=tar", rev, "--", rel)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(into, filter="data")
    return into / rel
