"""Extension points a conftest.py uses: adapter kinds, the make_adapter hook, metric families."""

from __future__ import annotations

import pytest

from agents import by_id, read_record

ECHO_ADAPTER = """\
import pytest_agenteval as agenteval


class EchoOptions(agenteval.TargetOptions):
    prefix: str = "echo: "
    secret_key: str = ""


@agenteval.adapter("echo", options=EchoOptions)
class EchoAdapter:
    def __init__(self, target: EchoOptions, context: agenteval.AdapterContext) -> None:
        self.prefix = target.prefix
        self.concurrency = context.concurrency

    async def send(self, request: agenteval.TurnRequest) -> agenteval.AgentReply:
        if request.input == "down":
            raise agenteval.AgentError("http_status", "HTTP 503: down", 503)
        return agenteval.AgentReply(output=self.prefix + request.input, intent_name="ECHO",
                                    conversation_id=request.conversation_id or "c-1")

    async def aclose(self) -> None:
        pass
"""

CASES = """\
cases:
  - {id: E-1, request: {input: 你好}, rules: [{type: keyword_match, params: {all: ["回声：你好"]}}]}
  - {id: E-DOWN, request: {input: down}}
scenarios:
  - id: E-FLOW
    turns: [{input: 一}, {input: 二, rules: [{type: keyword_match, params: {all: [二]}}]}]
"""


@pytest.mark.parametrize("dist", [[], ["-n", "2"]])
def test_a_conftest_adapter_kind_runs_end_to_end(standalone, pytester, dist) -> None:
    pytester.makeconftest(ECHO_ADAPTER)
    standalone("target:\n  adapter: echo\n  prefix: 回声：\n  secret_key: k-123456\n",
               {"a.yaml": CASES})
    result = pytester.runpytest("cases", *dist)
    result.assert_outcomes(passed=2, errors=1)
    record = read_record(pytester.path)
    cases = by_id(record)
    assert cases["E-1"]["response"]["output"] == "回声：你好"
    assert cases["E-1"]["response"]["intent_name"] == "ECHO"
    assert cases["E-DOWN"]["error"] == {"kind": "http_status", "detail": "HTTP 503: down",
                                        "status_code": 503, "traceback": None}
    assert [t["reply"] for t in cases["E-FLOW"]["turns"]] == ["回声：一", "回声：二"]
    # the run record describes the target by the base fields only: its own options may be secret
    assert record["run"]["target"] == {"adapter": "echo", "concurrency": 32, "timeout_s": 30.0,
                                       "retries": 0}


def test_a_conftest_adapter_options_are_validated_with_their_line(standalone, pytester) -> None:
    pytester.makeconftest(ECHO_ADAPTER)
    standalone("target:\n  adapter: echo\n  prefx: x\n", {"a.yaml": CASES})
    result = pytester.runpytest("cases")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*agenteval.yaml:3 [[]target.prefx[]]: unknown field*"])


def test_the_make_adapter_hook_wraps_a_registered_kind(project, pytester, agent) -> None:
    # a conftest signs every request of the built-in http adapter, through the hook
    pytester.makeconftest("""\
from pytest_agenteval.adapters import ADAPTERS


class Signed:
    def __init__(self, inner):
        self.inner = inner

    async def send(self, request):
        extra = {**request.extra, "signature": "sig:" + request.case_id}
        return await self.inner.send(type(request)(request.input, request.history,
                                                   request.knowledge, extra,
                                                   request.conversation_id, request.case_id,
                                                   request.turn_index))

    async def aclose(self):
        await self.inner.aclose()


def pytest_agenteval_make_adapter(config, target, context):
    if target.adapter == "http":
        return Signed(ADAPTERS.get("http").factory(target, context))
    return None
""")
    project({"a.yaml": "cases:\n  - {id: H-1, request: {input: 你好}}\n"})
    pytester.runpytest("cases").assert_outcomes(passed=1)
    assert agent.requests[0]["extra"] == {"signature": "sig:H-1"}


FAMILY = """\
from pydantic import BaseModel

from pytest_agenteval.metrics import Family, GateValue, register


class ReplyLength(BaseModel):
    mean_chars: float | None


class ReplyLengthFamily(Family[ReplyLength]):
    key = "reply_length"
    model = ReplyLength
    order = 75
    gate = (GateValue("reply_chars_mean", lambda m, g: m.mean_chars),)

    def compute(self, run):
        lengths = [len(t.reply) for _, t in run.turns() if t.reply is not None]
        return ReplyLength(mean_chars=sum(lengths) / len(lengths) if lengths else None)

    def summary(self, value, metrics):
        return [f"reply length: {value.mean_chars:.1f} characters on average"]


register(ReplyLengthFamily())
"""


def test_a_metric_family_is_one_module_and_the_gate_can_bound_it(project, pytester) -> None:
    pytester.makeconftest(FAMILY)
    rules = pytester.mkdir("rules")
    rules.joinpath("gates.yaml").write_text(
        "metrics:\n  - {metric: reply_chars_mean, max: 5}\nformal_requires_reviewed: false\n",
        encoding="utf-8")
    project({"a.yaml": "cases:\n  - {id: F-1, request: {input: 你好}}\n"
                       "  - {id: F-2, request: {input: 一个很长很长的问题}}\n"})
    result = pytester.runpytest("cases")
    result.stdout.fnmatch_lines(["GATE: BLOCK*", "  - reply_chars_mean = 8.5 (required ≤ 5)",
                                 "*reply length: 8.5 characters on average*"])
    assert result.ret == 1
    record = read_record(pytester.path)
    assert record["metrics"]["reply_length"] == {"mean_chars": 8.5}
    assert list(record["metrics"])[-1] == "reply_length"  # after the built-in families


FOLDING_FAMILY = FAMILY.replace("""    def compute(self, run):
        lengths = [len(t.reply) for _, t in run.turns() if t.reply is not None]
        return ReplyLength(mean_chars=sum(lengths) / len(lengths) if lengths else None)
""", """    def folder(self, run):
        return ReplyLengthFolder()
""").replace("class ReplyLengthFamily", """class ReplyLengthFolder(Folder[ReplyLength]):
    def __init__(self):
        self.chars = self.turns = 0

    def add(self, item):
        for turn in item.turns:
            if turn.reply is not None:
                self.chars += len(turn.reply)
                self.turns += 1

    def result(self):
        return ReplyLength(mean_chars=self.chars / self.turns if self.turns else None)


class ReplyLengthFamily""").replace("import Family,", "import Family, Folder,")


@pytest.mark.parametrize("dist", [[], ["-n", "2"]], ids=["single", "xdist"])
def test_a_metric_family_can_fold_the_results_as_they_arrive(project, pytester, dist) -> None:
    assert "def compute" not in FOLDING_FAMILY
    pytester.makeconftest(FOLDING_FAMILY)
    project({"a.yaml": "cases:\n  - {id: F-1, request: {input: 你好}}\n"
                       "  - {id: F-2, request: {input: 一个很长很长的问题}}\n"})
    result = pytester.runpytest("cases", *dist)
    result.stdout.fnmatch_lines(["*reply length: 8.5 characters on average*"])
    assert read_record(pytester.path)["metrics"]["reply_length"] == {"mean_chars": 8.5}


def test_a_metric_family_needs_compute_or_folder() -> None:
    from pydantic import BaseModel

    from pytest_agenteval.metrics import Family, RunData

    class Nothing(BaseModel):
        pass

    class Neither(Family[Nothing]):
        key = "neither"
        model = Nothing

    with pytest.raises(NotImplementedError, match="Neither overrides neither compute nor folder"):
        Neither().compute(RunData(()))
    with pytest.raises(NotImplementedError, match="Neither overrides neither"):
        Neither().folder(RunData(()))


ALIVE_FAMILY = """\
import gc

from pydantic import BaseModel

from pytest_agenteval.metrics import Family, Folder, register
from pytest_agenteval.model.results import ItemResult, TurnResult


class Alive(BaseModel):
    folded: int
    items: int
    turns: int


class AliveFolder(Folder[Alive]):
    def __init__(self):
        self.folded = 0

    def add(self, item):
        self.folded += 1

    def result(self):
        gc.collect()
        live = gc.get_objects()
        # this run's only: an in-process pytester shares the interpreter with other tests
        return Alive(folded=self.folded,
                     items=sum(isinstance(o, ItemResult) and o.id.startswith("ALIVE-")
                               for o in live),
                     turns=sum(isinstance(o, TurnResult) and o.input.startswith("ALIVE")
                               for o in live))


class AliveFamily(Family[Alive]):
    key = "alive"
    model = Alive

    def folder(self, run):
        return AliveFolder()


register(AliveFamily())
"""


@pytest.mark.parametrize("dist", [[], ["-n", "2"]], ids=["single", "xdist"])
def test_the_end_of_a_run_holds_no_typed_result(project, pytester, dist) -> None:
    """The metrics are folded as results arrive: when they are finished, no ItemResult of
    the run is alive (they were all held till the end once: 230 MB at 10,000 cases)."""
    pytester.makeconftest(ALIVE_FAMILY)
    project({"a.yaml": "cases:\n" + "".join(
        f"  - {{id: ALIVE-{n}, request: {{input: ALIVE{n}}}}}\n" for n in range(30))})
    result = pytester.runpytest("cases", *dist)
    result.assert_outcomes(passed=30)
    assert read_record(pytester.path)["metrics"]["alive"] == {"folded": 30, "items": 0,
                                                              "turns": 0}
