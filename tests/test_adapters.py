"""Adapters end to end: http templates, python callables, openai_chat, builtin."""

from __future__ import annotations

import pytest

from agents import by_id, read_record
from openai_server import OpenAIServer


def test_http_template_history_item_and_response_map(pytester: pytest.Pytester, agent) -> None:
    pytester.makeini("[pytest]\nagenteval_paths = cases\n")
    pytester.path.joinpath("agenteval.yaml").write_text(f"""\
target:
  adapter: http
  url: {agent.url}
  request_template:
    input: "{{input}}"
    case_id: "{{case_id}}"
    turn_index: "{{turn_index}}"
    meta: {{channel: "{{extra.channel}}", note: "case {{case_id}} turn {{turn_index}} {{{{x}}}}"}}
    history: "{{history}}"
  history_item: {{speaker: "{{role}}", text: "{{content}}"}}
  roles: {{user: customer, assistant: agent}}
""", encoding="utf-8")
    pytester.mkdir("cases").joinpath("a.yaml").write_text("""\
cases:
  - id: H-1
    request:
      input: 你好
      history: [{role: user, content: 在吗}, {role: assistant, content: 在的}]
      extra: {channel: im}
""", encoding="utf-8")
    pytester.runpytest("cases").assert_outcomes(passed=1)
    (body,) = agent.requests
    assert body == {
        "input": "你好", "case_id": "H-1", "turn_index": 0,
        "meta": {"channel": "im", "note": "case H-1 turn 0 {x}"},
        "history": [{"speaker": "customer", "text": "在吗"}, {"speaker": "agent", "text": "在的"}],
    }


def test_python_adapter_sync_async_and_failures(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nagenteval_paths = cases\n")
    pytester.makepyfile(mybot="""
        import asyncio

        def reply(turn):
            text = turn["input"]
            if text == "boom":
                raise RuntimeError("backend down")
            if text == "quit":
                raise SystemExit(3)
            if text == "bad":
                return {"answer": "no output key"}
            return {"output": f"echo {text} #{turn['turn_index']}", "intent_code": 9,
                    "conversation_id": turn["conversation_id"] or "conv-7"}

        async def areply(turn):
            await asyncio.sleep(0)
            return {"output": "async " + turn["input"], "intent_name": "PHONE_PROVIDED"}
    """)
    pytester.path.joinpath("agenteval.yaml").write_text(
        "target: {adapter: python, callable: 'mybot:reply'}\n")
    pytester.mkdir("cases").joinpath("a.yaml").write_text("""\
cases:
  - {id: P-OK, request: {input: hi}, rules: [{type: keyword_match, params: {all: ["echo hi #0"]}}]}
  - {id: P-BOOM, request: {input: boom}}
  - {id: P-QUIT, request: {input: quit}}
  - {id: P-BAD, request: {input: bad}}
scenarios:
  - id: P-FLOW
    turns:
      - {input: a}
      - {input: b, rules: [{type: keyword_match, params: {all: ["#1"]}}]}
""", encoding="utf-8")
    pytester.runpytest("cases").assert_outcomes(passed=2, errors=3)
    cases = by_id(read_record(pytester.path))
    quit_ = cases["P-QUIT"]["error"]  # sys.exit() in the callable ends its call, not the run
    assert (quit_["kind"], quit_["detail"]) == ("connection", "SystemExit: 3")
    assert 'mybot.py", line 8, in reply' in quit_["traceback"]
    boom = cases["P-BOOM"]["error"]
    assert (boom["kind"], boom["detail"]) == ("connection", "RuntimeError: backend down")
    # the user's traceback is kept (their frame and line), without the plugin's frames
    assert 'mybot.py", line 6, in reply' in boom["traceback"]
    assert "adapters/python.py" not in boom["traceback"]
    assert cases["P-BAD"]["error"]["kind"] == "bad_body"
    assert cases["P-OK"]["intent"]["code_returned"] == 9
    pytester.path.joinpath("agenteval.yaml").write_text(
        "target: {adapter: python, callable: 'mybot:areply'}\n")
    pytester.runpytest("cases", "-k", "P-OK")
    assert by_id(read_record(pytester.path))["P-OK"]["response"]["output"] == "async hi"


@pytest.mark.parametrize("dist", [[], ["-n", "2"]])
def test_a_callable_that_cannot_be_imported_is_one_usage_error_before_any_call(
        standalone, pytester, dist) -> None:
    standalone("target:\n  adapter: python\n  callable: 'nosuchmodule:reply'\n",
               {"a.yaml": "cases:\n  - {id: A, request: {input: x}}\n"
                          "  - {id: B, request: {input: y}}\n"})
    result = pytester.runpytest_subprocess("cases", *dist)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([
        "ERROR: agenteval: the target cannot be called:",
        "agenteval.yaml:3 [[]target.callable[]]: target.callable 'nosuchmodule:reply': "
        "cannot import 'nosuchmodule'*"])
    assert "PASSED" not in result.stdout.str() and "ERROR case" not in result.stdout.str()
    assert not list(pytester.path.glob("reports/*"))  # nothing ran, nothing is recorded


def test_the_preflight_does_not_stop_a_run_that_calls_no_agent(standalone, pytester,
                                                               monkeypatch) -> None:
    # `pytest rules/` needs no agent: an unset token under target: is no error there
    monkeypatch.delenv("NO_SUCH_TOKEN", raising=False)
    standalone("target:\n  adapter: http\n  url: http://127.0.0.1:9/x\n  headers:\n"
               "    Authorization: Bearer ${NO_SUCH_TOKEN}\n",
               {"a.yaml": "cases:\n  - {id: A, request: {input: x}}\n"})
    rules = pytester.mkdir("rules")
    rules.joinpath("business-rules.yaml").write_text("""\
- id: BR-1
  title: 不得提微信
  check: keyword_match
  params: {none: [微信]}
  applies_to: {behaviors: all}
  examples:
    pass: [{input: 你好, reply: 您好}]
""", encoding="utf-8")
    pytester.runpytest("rules").assert_outcomes(passed=1)
    result = pytester.runpytest("cases")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*agenteval.yaml:5 [[]target.headers.Authorization[]]: "
                                 "environment variable NO_SUCH_TOKEN is not set*"])
    # a whole url from an unset variable: not even valid, and still no error until a call
    pytester.path.joinpath("agenteval.yaml").write_text(
        "target: {adapter: http, url: '${NO_SUCH_TOKEN}'}\n", encoding="utf-8")
    pytester.runpytest("rules").assert_outcomes(passed=1)
    result = pytester.runpytest("cases")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*agenteval.yaml:1 [[]target.url[]]: environment variable "
                                 "NO_SUCH_TOKEN is not set*"])


def test_openai_chat_adapter_against_a_local_server(pytester, monkeypatch) -> None:
    monkeypatch.setenv("LOCAL_KEY", "sk-local-test-key")
    with OpenAIServer() as server:
        pytester.makeini("[pytest]\nagenteval_paths = cases\n")
        pytester.path.joinpath("agenteval.yaml").write_text(f"""\
target:
  adapter: openai_chat
  model: tiny-bot
  base_url: {server.base_url}
  api_key_env: LOCAL_KEY
  system_prompt: 你是二手车客服。
  timeout_s: 1
""", encoding="utf-8")
        pytester.mkdir("cases").joinpath("a.yaml").write_text("""\
cases:
  - id: O-1
    request:
      input: 多少公里
      history: [{role: user, content: 在吗}, {role: assistant, content: 在的}]
      knowledge: {mileage: 3.37万公里}
    rules: [{type: keyword_match, params: {all: ["[tiny-bot] 收到：多少公里"]}}]
  - {id: O-429, request: {input: __429__}}
  - {id: O-NULL, request: {input: __null__}}
  - {id: O-SLOW, request: {input: __slow__}}
""", encoding="utf-8")
        pytester.runpytest("cases").assert_outcomes(passed=1, errors=3)
        cases = by_id(read_record(pytester.path))
        assert {k: v["error"]["kind"] for k, v in cases.items() if v["error"]} == {
            "O-429": "http_status", "O-NULL": "bad_body", "O-SLOW": "timeout"}
        first = next(r for r in server.requests
                     if r["body"]["messages"][-1]["content"] == "多少公里")
        assert first["auth"] == "Bearer sk-local-test-key"
        messages = first["body"]["messages"]
        assert messages[0]["role"] == "system" and "<knowledge>" in messages[0]["content"]
        assert "3.37万公里" in messages[0]["content"]
        assert [m["role"] for m in messages[1:]] == ["user", "assistant", "user"]
        assert len([r for r in server.requests if r["body"]["messages"][-1]["content"]
                    == "__429__"]) == 1, "no retries unless asked"


def test_builtin_target_runs_over_real_http(standalone, pytester) -> None:
    standalone("target: {adapter: builtin}\n", {"a.yaml": """\
        cases:
          - id: B-1
            request: {input: 13800000000}
            expected: {intent_code: 9}
        """})
    pytester.runpytest("cases").assert_outcomes(passed=1)
    case = by_id(read_record(pytester.path))["B-1"]
    assert case["response"]["intent_name"] == "PHONE_PROVIDED"
    assert case["response"]["conversation_id"]


def test_agenteval_target_points_builtin_config_at_a_running_agent(standalone,
                                                                   pytester) -> None:
    from pytest_agenteval.demo import DemoServer

    standalone("target: {adapter: builtin}\n",
               {"a.yaml": "cases:\n  - {id: T-1, request: {input: 再见}, "
                          "expected: {intent_code: 10}}\n"})
    with DemoServer() as server:
        pytester.runpytest("cases", f"--agenteval-target={server.url}").assert_outcomes(passed=1)
    assert read_record(pytester.path)["run"]["target"] == {
        "adapter": "http", "url": server.url, "concurrency": 32, "timeout_s": 30.0, "retries": 0}
    assert "aiohttp" in read_record(pytester.path)["run"]["versions"]


def test_retries_are_off_unless_asked_and_only_for_retryable_errors(project, pytester,
                                                                    agent) -> None:
    project({"a.yaml": "cases:\n  - {id: R-1, request: {input: __500__}}\n"
                       "  - {id: R-2, request: {input: __nonjson__}}\n"})
    pytester.runpytest("cases")
    assert len(agent.requests) == 2
    agent.requests.clear()
    (pytester.path / "agenteval.yaml").write_text(
        f"target: {{adapter: http, url: '{agent.url}', retries: 2, retry_backoff_s: 0.01}}\n")
    pytester.runpytest("cases")
    sends = [r["case_id"] for r in agent.requests]
    assert sends.count("R-1") == 3, "HTTP 500 is retried"
    assert sends.count("R-2") == 1, "a bad body is not retried"


def test_sync_callables_get_as_many_threads_as_conversations(pytester) -> None:
    pytester.makeini("[pytest]\nagenteval_paths = cases\n"
                     "addopts = -p no:benchmark --agenteval-workers=asked\n")
    pytester.makepyfile(slowbot="""
        import threading, time
        lock = threading.Lock()
        state = {"now": 0, "peak": 0}

        def reply(turn):
            with lock:
                state["now"] += 1
                state["peak"] = max(state["peak"], state["now"])
            time.sleep(0.2)
            with lock:
                state["now"] -= 1
            return {"output": f"peak={state['peak']}"}
    """)
    pytester.path.joinpath("agenteval.yaml").write_text(
        "target: {adapter: python, callable: 'slowbot:reply', concurrency: 24}\n")
    rows = ["cases:"] + [f"  - {{id: S-{i:02d}, request: {{input: x}}}}" for i in range(24)]
    pytester.mkdir("cases").joinpath("a.yaml").write_text("\n".join(rows) + "\n")
    pytester.runpytest("cases").assert_outcomes(passed=24)
    outputs = [c["response"]["output"] for c in read_record(pytester.path)["cases"]]
    assert max(int(o.split("=")[1]) for o in outputs) > 12


def test_a_python_callable_that_hangs_costs_only_its_own_call(standalone, pytester) -> None:
    # one call blocks far past its timeout; the others must neither queue behind its thread
    # nor count queueing as latency
    pytester.makepyfile(hangbot="""
        import time

        def reply(turn):
            if turn["input"] == "hang":
                time.sleep(3)
            else:
                time.sleep(0.05)
            return {"output": "ok " + turn["input"]}
    """)
    rows = ["cases:", "  - {id: HANG, request: {input: hang}}"]
    rows += [f"  - {{id: OK-{i}, request: {{input: '{i}'}}}}" for i in range(6)]
    standalone("target: {adapter: python, callable: 'hangbot:reply', timeout_s: 0.5, "
               "concurrency: 1}\n", {"a.yaml": "\n".join(rows) + "\n"})
    pytester.runpytest("cases").assert_outcomes(passed=6, errors=1)
    cases = by_id(read_record(pytester.path))
    assert cases["HANG"]["error"]["kind"] == "timeout"
    assert max(cases[f"OK-{i}"]["latency_ms"] for i in range(6)) < 400
