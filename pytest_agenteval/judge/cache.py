"""The judge cache: valid judge results in SQLite (``judge.cache``, default
``.agenteval/cache.sqlite``).

The key is a hash of everything that decides a judge reply — model, base URL,
rubric hash, the exact messages and the trial index — and nothing else, so a
rerun with another gate threshold, another ``-k`` or another report option
reuses every result, and a changed rubric, reply or model asks again. Only
valid results are stored: a timeout or a broken contract is asked again next
run. Several xdist workers share the file (WAL, a busy timeout); the output
rung found per endpoint is remembered here too.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from pathlib import Path
from typing import Any

__all__ = ["JudgeCache", "cache_key", "clear_cache"]


def cache_key(*parts: Any) -> str:
    blob = json.dumps(parts, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()


_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS results (key TEXT PRIMARY KEY, value TEXT NOT NULL, "
    "created REAL NOT NULL)",
    "CREATE TABLE IF NOT EXISTS modes (endpoint TEXT PRIMARY KEY, mode TEXT NOT NULL)",
)


class JudgeCache:
    """A small key → JSON store; every method is quick (one indexed row) and never raises
    for a busy or broken file: a cache that cannot be used is a cache miss."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.error: str | None = None
        self._db: sqlite3.Connection | None = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(path, timeout=10, isolation_level=None,
                                 check_same_thread=False)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            for stmt in _SCHEMA:
                db.execute(stmt)
            self._db = db
        except (OSError, sqlite3.Error) as exc:
            self.error = f"{type(exc).__name__}: {exc}"

    def get(self, key: str) -> Any | None:
        if self._db is None:
            return None
        try:
            row = self._db.execute("SELECT value FROM results WHERE key = ?", (key,)).fetchone()
        except sqlite3.Error:
            return None
        return None if row is None else json.loads(row[0])

    def put(self, key: str, value: Any) -> None:
        if self._db is None:
            return
        try:
            self._db.execute("INSERT OR REPLACE INTO results VALUES (?, ?, ?)",
                             (key, json.dumps(value, ensure_ascii=False), time.time()))
        except (sqlite3.Error, UnicodeEncodeError):  # a half character: not cached
            pass

    def mode(self, endpoint: str) -> str | None:
        if self._db is None:
            return None
        try:
            row = self._db.execute("SELECT mode FROM modes WHERE endpoint = ?",
                                   (endpoint,)).fetchone()
        except sqlite3.Error:
            return None
        return None if row is None else str(row[0])

    def set_mode(self, endpoint: str, mode: str) -> None:
        if self._db is None:
            return
        try:
            self._db.execute("INSERT OR REPLACE INTO modes VALUES (?, ?)", (endpoint, mode))
        except sqlite3.Error:
            pass

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None


def clear_cache(path: Path) -> int:
    """Empty the cache file; returns how many results it held (0 when there is none)."""
    if not path.is_file():
        return 0
    db = sqlite3.connect(path, timeout=10)
    try:
        n = int(db.execute("SELECT count(*) FROM results").fetchone()[0])
        db.execute("DELETE FROM results")
        db.execute("DELETE FROM modes")
        db.commit()
        db.execute("VACUUM")
    except sqlite3.Error:
        n = 0
    finally:
        db.close()
    return n
