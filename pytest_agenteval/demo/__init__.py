"""The reference agent: a rule-based used-car dealer IM bot with a vendor-style API.

Run it standalone to see the API::

    python -m pytest_agenteval.demo --port 8080
"""

from __future__ import annotations

from .server import DemoServer

__all__ = ["DemoServer"]
