"""Imports every built-in rule family, which registers its types."""

from __future__ import annotations

from . import _format, _match, _service

__all__ = ["_format", "_match", "_service"]
