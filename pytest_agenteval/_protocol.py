"""A case item's run protocol: pytest's, without the phase hooks that have nothing to do.

pytest runs an item in three phases, each through a hook (``pytest_runtest_setup``,
``_call``, ``_teardown``) whose implementations set ``PYTEST_CURRENT_TEST``, push the item
on the setup state, read its skip and xfail marks, and look for unraisable exceptions and
those of threads; then each phase's report is made and logged. For a case item those
implementations find nothing to do (its work is a conversation on the engine's loop,
which runs ahead of the items), and with the makereport hook of a passed setup and
teardown they were about a fifth of what pytest spends on a case item.

So a case item runs here, in the same order and with the same reports through the same
hooks (``pytest_runtest_logstart``, ``_makereport`` and ``_logreport`` for each phase,
``pytest_exception_interact``, ``_logfinish``), and with the same setup state, but
without calling the phase hooks. Only where nothing could tell the difference:

- a run of case items alone, without ``--pdb``, ``--trace``, ``--setup-show``,
  ``--setup-only`` or ``--setup-plan``;
- no plugin or conftest beyond pytest's own implements a phase hook, or another
  ``pytest_runtest_protocol`` that is not a wrapper (``pytest-rerunfailures``); wrappers of
  the protocol (pytest's warnings capture, ``pytest-timeout``) still wrap it;
- the item carries no skip, skipif, xfail or usefixtures mark.

Otherwise pytest's own protocol runs the item. ``PYTEST_CURRENT_TEST`` is not set for a
case item that runs here: what it would name runs on the engine's loop at other times.
Unraisable exceptions and those of threads are reported at pytest's next look (the next
item that runs pytest's protocol, or the session's end).

A passed setup or teardown report is made here, as pytest's own
``TestReport.from_item_and_call`` makes it, without ``pytest_runtest_makereport``, where
that hook has no implementation but pytest's, pytest-html's, hypothesis's and the
plugin's own: none of them adds anything to such a report of a case item, and the hook's
six implementations, four of them wrappers, cost more than the report.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest
from _pytest.runner import check_interactive_exception

if TYPE_CHECKING:
    from .items import CaseItem

__all__ = ["Protocol", "eligible", "marked"]

#: the implementations of the phase hooks that a case item can go without: pytest's own,
#: and hypothesis's (it acts on hypothesis tests only); each by its registered name
_SPARED = frozenset({"runner", "skipping", "unraisableexception", "threadexception",
                     "capturemanager", "logging-plugin", "hypothesispytest"})
_PHASES = ("pytest_runtest_setup", "pytest_runtest_call", "pytest_runtest_teardown")
#: options under which pytest's protocol does more for an item than make its reports
_OPTIONS = ("usepdb", "trace", "setupshow", "setuponly", "setupplan")
#: marks that pytest's phase hooks act on
_MARKS = frozenset({"skip", "skipif", "xfail", "usefixtures"})
_RERAISE = (pytest.exit.Exception, KeyboardInterrupt)
#: the implementations of ``pytest_runtest_makereport`` that add nothing to a passed setup
#: or teardown report of a case item (the plugin's own is passed in)
_PLAIN_REPORTS = frozenset({"runner", "unittest", "skipping", "tmpdir", "html",
                            "hypothesispytest"})


def eligible(session: pytest.Session, plugin: object) -> Protocol | None:
    """The protocol the session's case items may run by (see the module's text), or ``None``
    for pytest's own. ``plugin`` is the one that implements the protocol here (its own
    implementations do not count)."""
    config = session.config
    if any(config.getoption(name, False) for name in _OPTIONS):
        return None
    if not hasattr(session, "_setupstate"):
        return None  # a pytest that keeps its setup state elsewhere
    pm = config.pluginmanager
    for name in _PHASES:
        for impl in getattr(pm.hook, name).get_hookimpls():
            if pm.get_name(impl.plugin) not in _SPARED:
                return None
    if not all(impl.hookwrapper or impl.wrapper or impl.plugin is plugin
               or pm.get_name(impl.plugin) == "runner"
               for impl in pm.hook.pytest_runtest_protocol.get_hookimpls()):
        return None
    return Protocol(quick=all(impl.plugin is plugin or pm.get_name(impl.plugin) in _PLAIN_REPORTS
                              for impl in pm.hook.pytest_runtest_makereport.get_hookimpls()))


def marked(item: pytest.Item) -> bool:
    """Whether ``item`` carries a mark that pytest's phase hooks act on."""
    return any(mark.name in _MARKS for mark in item.iter_markers())


class Protocol:
    """Runs a case item as pytest's ``runtestprotocol`` would, without its phase hooks."""

    def __init__(self, quick: bool) -> None:
        #: a passed setup or teardown report is made here, not by the makereport hook
        self.quick = quick

    def run(self, item: CaseItem, nextitem: pytest.Item | None) -> bool:
        ihook = item.ihook
        nodeid, location = item.nodeid, item.location
        ihook.pytest_runtest_logstart(nodeid=nodeid, location=location)
        session = item.session
        state = session._setupstate
        report = self._phase(item, ihook, "setup", lambda: state.setup(item))
        if report.passed:
            self._phase(item, ihook, "call", item.runtest)
        if session.shouldfail or session.shouldstop:
            nextitem = None  # pytest's own protocol tears everything down then (#11706)
        self._phase(item, ihook, "teardown", lambda: state.teardown_exact(nextitem))
        ihook.pytest_runtest_logfinish(nodeid=nodeid, location=location)
        return True

    def _phase(self, item: CaseItem, ihook: Any, when: Any,
               func: Callable[[], None]) -> pytest.TestReport:
        call = pytest.CallInfo.from_call(func, when=when, reraise=_RERAISE)
        report: pytest.TestReport
        if self.quick and when != "call" and call.excinfo is None and not item._report_sections:
            report = pytest.TestReport(item.nodeid, item.location,
                                       dict.fromkeys(item.keywords, 1), "passed", None, when,
                                       (), call.duration, call.start, call.stop,
                                       user_properties=item.user_properties)
        else:
            report = ihook.pytest_runtest_makereport(item=item, call=call)
        ihook.pytest_runtest_logreport(report=report)
        if check_interactive_exception(call, report):
            ihook.pytest_exception_interact(node=item, call=call, report=report)
        return report
