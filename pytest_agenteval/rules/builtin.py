"""Imports every built-in rule family, which registers its types."""

from __future__ import annotations

from . import _dialog, _format, _judged, _knowledge, _match, _service

__all__ = ["_dialog", "_format", "_judged", "_knowledge", "_match", "_service"]
