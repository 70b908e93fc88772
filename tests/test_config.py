"""Unit tests of ``agenteval.yaml`` loading (pytest_agenteval/config.py, model/config.py)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from pytest_agenteval.config import ConfigError, LoadedConfig, load_config
from pytest_agenteval.model.config import (
    BuiltinTarget,
    HttpTarget,
    OpenAIChatTarget,
    PythonTarget,
)

NO_ENV: dict[str, str] = {}


def _load(tmp_path: Path, text: str, env: dict[str, str] | None = None,
          target_url: str | None = None) -> LoadedConfig:
    tmp_path.joinpath("agenteval.yaml").write_text(textwrap.dedent(text), encoding="utf-8")
    return load_config(tmp_path, None, target_url, NO_ENV if env is None else env)


def _error(tmp_path: Path, text: str, env: dict[str, str] | None = None,
           target_url: str | None = None) -> str:
    with pytest.raises(ConfigError) as info:
        _load(tmp_path, text, env, target_url)
    return str(info.value)


# --- defaults and discovery -----------------------------------------------------------------


def test_defaults_without_a_config_file(tmp_path: Path) -> None:
    cfg = load_config(tmp_path, None, None, NO_ENV)
    assert cfg.path is None
    assert isinstance(cfg.target, BuiltinTarget)
    assert cfg.model.judge is None
    assert cfg.model.language == "zh"
    assert cfg.model.paths.rules_dir == "rules"
    assert cfg.model.paths.reports_dir == "reports"
    assert cfg.model.privacy.mask is True
    assert cfg.secrets == set()
    assert cfg.describe_target() == {"adapter": "builtin", "concurrency": 32,
                                     "timeout_s": 30.0, "retries": 0}


def test_empty_file_gives_defaults(tmp_path: Path) -> None:
    cfg = _load(tmp_path, "# nothing yet\n")
    assert cfg.path == tmp_path / "agenteval.yaml"
    assert isinstance(cfg.target, BuiltinTarget)


def test_explicit_path_wins_and_missing_explicit_is_an_error(tmp_path: Path) -> None:
    other = tmp_path / "other.yaml"
    other.write_text("language: en\n", encoding="utf-8")
    assert load_config(tmp_path, str(other), None, NO_ENV).model.language == "en"
    with pytest.raises(ConfigError, match=r"--agenteval-config .*nope\.yaml: no such file"):
        load_config(tmp_path, str(tmp_path / "nope.yaml"), None, NO_ENV)


def test_top_level_must_be_a_mapping(tmp_path: Path) -> None:
    assert _error(tmp_path, "- a\n- b\n").startswith("agenteval.yaml:1: the top level must")


def test_bad_yaml_is_a_config_error_with_line(tmp_path: Path) -> None:
    assert _error(tmp_path, "target:\n  adapter: [http\nx: 1\n").startswith("agenteval.yaml:2:")


# --- each adapter kind ----------------------------------------------------------------------


def test_http_target(tmp_path: Path) -> None:
    cfg = _load(tmp_path, """\
        target:
          adapter: http
          url: https://agent.example/api/chat
          timeout_s: 5
          response_map: {output: data.reply}
        """)
    assert isinstance(cfg.target, HttpTarget)
    assert cfg.target.url == "https://agent.example/api/chat"
    assert cfg.target.timeout_s == 5.0
    assert cfg.target.response_map.output == "data.reply"
    assert cfg.target.retries == 0


@pytest.mark.parametrize("body, field, line, words", [
    ("adapter: http\n", "target.url", 1, "required field is missing"),
    ("adapter: http\n  url: ftp://x\n", "target.url", 3, "must start with http://"),
    ("adapter: python\n", "target.callable", 1, "required field is missing"),
    ("adapter: python\n  callable: pkg.mod.fn\n", "target.callable", 3,
     "package.module:function"),
    ("adapter: python\n  callable: 'pkg.mod:'\n", "target.callable", 3,
     "package.module:function"),
    ("adapter: openai_chat\n", "target.model", 1, "required field is missing"),
    ("adapter: http\n  url: http://x\n  timeout_s: 0\n", "target.timeout_s", 4, "greater than"),
    ("adapter: builtin\n  concurrency: 0\n", "target.concurrency", 3, "greater than"),
])
def test_adapter_validation(tmp_path: Path, body: str, field: str, line: int,
                            words: str) -> None:
    msg = _error(tmp_path, "target:\n  " + body)
    assert msg.startswith(f"agenteval.yaml:{line} [{field}]: ")
    assert words in msg


def test_python_and_openai_targets(tmp_path: Path) -> None:
    py = _load(tmp_path, "target: {adapter: python, callable: my_agent.api:reply}\n")
    assert isinstance(py.target, PythonTarget)
    assert py.target.callable == "my_agent.api:reply"
    assert py.describe_target()["callable"] == "my_agent.api:reply"
    chat = _load(tmp_path, "target: {adapter: openai_chat, model: qwen-plus}\n")
    assert isinstance(chat.target, OpenAIChatTarget)
    assert chat.describe_target()["model"] == "qwen-plus"


def test_unknown_adapter_lists_known_ones(tmp_path: Path) -> None:
    msg = _error(tmp_path, "language: zh\ntarget:\n  adapter: grpc\n")
    assert msg.startswith("agenteval.yaml:3 [target.adapter]: unknown adapter 'grpc'; ")
    assert msg.endswith("known adapters: builtin, http, openai_chat, python")


def test_a_target_without_an_adapter_says_which_there_are(tmp_path: Path) -> None:
    msg = _error(tmp_path, "target:\n  url: http://x\n")
    assert msg == ("agenteval.yaml:1 [target.adapter]: say which adapter: "
                   "builtin | http | openai_chat | python")


@pytest.mark.parametrize("text, line, field", [
    ("target:\n  adapter: http\n  url: http://x\n  bogus: 1\n", 4, "target.bogus"),
    ("language: zh\nreport_dir: x\n", 2, "report_dir"),
    ("judge:\n  model: m\n  temprature: 0\n", 3, "judge.temprature"),
    ("target:\n  adapter: http\n  url: http://x\n  response_map: {ouput: a}\n", 4,
     "target.response_map.ouput"),
])
def test_unknown_key_names_file_line_and_field(tmp_path: Path, text: str, line: int,
                                               field: str) -> None:
    msg = _error(tmp_path, text)
    assert msg.startswith(f"agenteval.yaml:{line} [{field}]: unknown field")


def test_wrong_literal(tmp_path: Path) -> None:
    msg = _error(tmp_path, "paths: {rules_dir: r}\nlanguage: fr\n")
    assert msg.startswith("agenteval.yaml:2 [language]: ")
    assert "'zh' or 'en'" in msg


# --- environment interpolation --------------------------------------------------------------

HTTP = "target:\n  adapter: http\n  url: http://127.0.0.1:8080/chat\n"


def test_var_and_default_interpolation(tmp_path: Path) -> None:
    cfg = _load(tmp_path, HTTP + "  headers:\n"
                "    Authorization: Bearer ${AGENT_TOKEN}\n"
                "    X-Tenant: ${TENANT:-demo}\n",
                env={"AGENT_TOKEN": "tok-123456"})
    assert isinstance(cfg.target, HttpTarget)
    assert cfg.target.headers == {"Authorization": "Bearer tok-123456", "X-Tenant": "demo"}
    assert cfg.secrets == {"tok-123456"}  # a default is not a secret


def test_env_value_wins_over_default_and_is_a_secret(tmp_path: Path) -> None:
    cfg = _load(tmp_path, "target:\n  adapter: http\n  url: ${AGENT_URL:-http://d}\n",
                env={"AGENT_URL": "http://real:1/x"})
    assert cfg.target.url == "http://real:1/x"
    assert cfg.secrets == {"http://real:1/x"}


def test_unset_var_under_target_is_a_preflight_error_naming_variable_and_line(
        tmp_path: Path) -> None:
    # loading succeeds (`pytest rules/` calls no agent); the preflight before a call stops
    cfg = _load(tmp_path, HTTP + "  headers:\n    Authorization: Bearer ${AGENT_TOKEN}\n")
    [err] = cfg.preflight(tmp_path)
    msg = str(err)
    assert msg.startswith("agenteval.yaml:5 [target.headers.Authorization]: ")
    assert "environment variable AGENT_TOKEN is not set" in msg
    assert "${AGENT_TOKEN:-default}" in msg


@pytest.mark.parametrize(("value", "char", "where"), [("tok-123456\r", "\r", "at its end"),
                                                      ("tok\n-123456", "\n", "inside it")])
def test_a_control_character_in_a_header_variable_is_a_preflight_error_without_the_value(
        tmp_path: Path, value: str, char: str, where: str) -> None:
    """``export KEY=$(cat key.txt)`` on a CRLF file: aiohttp would refuse the header at the
    first call, with a traceback; the preflight names the variable, never the value."""
    cfg = _load(tmp_path, HTTP + "  headers:\n    Authorization: Bearer ${AGENT_TOKEN}\n",
                env={"AGENT_TOKEN": value})
    [err] = cfg.preflight(tmp_path)
    msg = str(err)
    assert msg.startswith("agenteval.yaml:5 [target.headers.Authorization]: environment "
                          f"variable AGENT_TOKEN holds a control character ({char!r}, {where})")
    assert "tok" not in msg and "123456" not in msg


def test_unset_var_under_judge_is_left_untouched(tmp_path: Path) -> None:
    cfg = _load(tmp_path, "judge:\n  model: m\n  base_url: ${AGENTEVAL_JUDGE_BASE_URL}\n")
    assert cfg.model.judge is not None
    assert cfg.model.judge.base_url == "${AGENTEVAL_JUDGE_BASE_URL}"
    assert cfg.secrets == set()


def test_interpolated_values_under_judge_are_secrets_too(tmp_path: Path) -> None:
    cfg = _load(tmp_path, "judge:\n  model: m\n  base_url: https://${HOST}/v1\n",
                env={"HOST": "llm.internal"})
    assert cfg.model.judge is not None
    assert cfg.model.judge.base_url == "https://llm.internal/v1"
    assert cfg.secrets == {"llm.internal"}


JUDGE = "judge:\n  model: m\n  api_key_env: JUDGE_KEY\n"


@pytest.mark.parametrize(("text", "env", "expected"), [
    # its own key, unset: named once, at its line
    (JUDGE + "simulator:\n  api_key_env: SIM_KEY\n", {"JUDGE_KEY": "j"},
     ["agenteval.yaml:5 [simulator.api_key_env]: environment variable SIM_KEY is not set"]),
    # no judge: the simulator reads OPENAI_API_KEY by default
    ("simulator:\n  model: m\n", {},
     ["agenteval.yaml:1 [simulator.api_key_env]: environment variable OPENAI_API_KEY is not "
      "set"]),
    ("simulator:\n  model: ${SIM_MODEL}\n", {"OPENAI_API_KEY": "k"},
     ["agenteval.yaml:2 [simulator.model]: environment variable SIM_MODEL is not set"]),
    # the judge's key is the judge's check: not said twice
    (JUDGE + "simulator:\n  model: other\n", {}, []),
    (JUDGE + "simulator:\n  api_key_env: SIM_KEY\n", {"JUDGE_KEY": "j", "SIM_KEY": "s"}, []),
    ("target: {adapter: builtin}\n", {}, []),  # no model, no simulator: nothing to call
])
def test_the_simulators_preflight(tmp_path: Path, text: str, env: dict[str, str],
                                  expected: list[str]) -> None:
    errors = _load(tmp_path, text, env).simulator_preflight(env)
    assert [str(e).split(";")[0] for e in errors] == expected


def test_the_simulators_own_key_is_a_secret(tmp_path: Path) -> None:
    cfg = _load(tmp_path, JUDGE + "simulator:\n  api_key_env: SIM_KEY\n",
                env={"JUDGE_KEY": "judge-key-1", "SIM_KEY": "sim-key-12345"})
    assert cfg.secrets == {"judge-key-1", "sim-key-12345"}
    bare = _load(tmp_path, "simulator:\n  model: m\n", env={"OPENAI_API_KEY": "openai-k-1"})
    assert bare.secrets == {"openai-k-1"}


def test_a_judge_block_without_a_model_is_an_error_not_ignored(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"agenteval.yaml:1 \[judge.model\]: required field"):
        _load(tmp_path, "judge:\n  base_url: http://127.0.0.1:1/v1\n")


def test_interpolation_is_not_recursive_and_keeps_other_text(tmp_path: Path) -> None:
    cfg = _load(tmp_path, HTTP + "  headers: {A: 'x-${ONE}-${TWO}-$HOME-{y}'}\n",
                env={"ONE": "${TWO}", "TWO": "2"})
    assert cfg.target.headers == {"A": "x-${TWO}-2-$HOME-{y}"}


def test_numbers_can_come_from_env(tmp_path: Path) -> None:
    cfg = _load(tmp_path, "target:\n  adapter: builtin\n  timeout_s: ${T:-7.5}\n")
    assert cfg.target.timeout_s == 7.5


def test_default_used_when_var_is_empty(tmp_path: Path) -> None:
    cfg = _load(tmp_path, "target:\n  adapter: http\n  url: ${AGENT_URL:-http://d/}\n",
                env={"AGENT_URL": ""})
    assert cfg.target.url == "http://d/"


# --- describe_target never shows secrets ----------------------------------------------------


def test_describe_target_hides_headers_credentials_and_query(tmp_path: Path) -> None:
    cfg = _load(tmp_path, """\
        target:
          adapter: http
          url: https://bot:pa55word@agent.example:8443/api/chat?key=K-SECRET&x=1
          headers: {Authorization: Bearer H-SECRET, X-Api-Key: K2-SECRET}
        """)
    described = cfg.describe_target()
    assert described == {"adapter": "http", "concurrency": 32, "timeout_s": 30.0,
                         "retries": 0, "url": "https://agent.example:8443/api/chat"}
    text = repr(described)
    for secret in ("pa55word", "bot:", "K-SECRET", "H-SECRET", "K2-SECRET", "Authorization"):
        assert secret not in text


def test_describe_openai_base_url_is_stripped(tmp_path: Path) -> None:
    cfg = _load(tmp_path, "target:\n  adapter: openai_chat\n  model: m\n"
                "  base_url: https://u:p@llm.example/v1?api-key=abc\n")
    assert cfg.describe_target()["base_url"] == "https://llm.example/v1"


# --- --agenteval-target override ------------------------------------------------------------


def test_target_url_overrides_http_url(tmp_path: Path) -> None:
    cfg = _load(tmp_path, HTTP + "  headers: {A: b}\n", target_url="http://10.0.0.2:9000/x")
    assert isinstance(cfg.target, HttpTarget)
    assert cfg.target.url == "http://10.0.0.2:9000/x"
    assert cfg.target.headers == {"A": "b"}  # the rest of the target is kept


def test_target_url_turns_builtin_into_http_speaking_demo_api(tmp_path: Path) -> None:
    cfg = _load(tmp_path, "target:\n  adapter: builtin\n  timeout_s: 3\n",
                target_url="http://127.0.0.1:8765/api/chat")
    assert isinstance(cfg.target, HttpTarget)
    assert cfg.target.url == "http://127.0.0.1:8765/api/chat"
    assert cfg.target.timeout_s == 3.0
    assert cfg.target.request_template["input"] == "{input}"
    assert cfg.target.response_map.output == "data.reply"


def test_target_url_without_config_file(tmp_path: Path) -> None:
    cfg = load_config(tmp_path, None, "http://h:1/", NO_ENV)
    assert isinstance(cfg.target, HttpTarget)
    assert cfg.describe_target()["url"] == "http://h:1/"


def test_target_url_refused_for_python_target(tmp_path: Path) -> None:
    msg = _error(tmp_path, "target: {adapter: python, callable: a.b:c}\n",
                 target_url="http://x/")
    assert msg == ("agenteval.yaml: --agenteval-target needs an http or builtin target,"
                   " not 'python'")


def test_target_url_must_be_http(tmp_path: Path) -> None:
    msg = _error(tmp_path, HTTP, target_url="localhost:8080")
    assert msg.startswith("--agenteval-target localhost:8080: ")
    assert "must start with http://" in msg


# --- templates ------------------------------------------------------------------------------


def test_request_template_with_unknown_name_is_rejected(tmp_path: Path) -> None:
    msg = _error(tmp_path, HTTP + "  request_template:\n    q: '{inputs}'\n")
    assert msg.startswith("agenteval.yaml:4 [target.request_template]: ")
    assert "unknown template name {inputs}" in msg
    assert "known names: case_id, conversation_id, extra, history, input" in msg


def test_nested_request_template_checked_too(tmp_path: Path) -> None:
    msg = _error(tmp_path, HTTP + "  request_template: {a: [{b: 'x {session}'}]}\n")
    assert "unknown template name {session}" in msg


def test_request_template_known_names_and_escapes_accepted(tmp_path: Path) -> None:
    cfg = _load(tmp_path, HTTP + "  request_template: {q: '{input}', e: '{extra.shop-id}',"
                " lit: '{{notaname}}', t: 'turn {turn_index}'}\n")
    assert cfg.target.request_template == {"q": "{input}", "e": "{extra.shop-id}",
                                           "lit": "{{notaname}}", "t": "turn {turn_index}"}


def test_history_item_names_limited_to_role_and_content(tmp_path: Path) -> None:
    ok = _load(tmp_path, HTTP + "  history_item: {speaker: '{role}', text: '{content}'}\n"
               "  roles: {user: customer, assistant: agent}\n")
    assert ok.target.history_item == {"speaker": "{role}", "text": "{content}"}
    assert ok.target.roles == {"user": "customer", "assistant": "agent"}
    msg = _error(tmp_path, HTTP + "  history_item: {who: '{role}', said: '{input}'}\n")
    assert msg.startswith("agenteval.yaml:4 [target.history_item]: ")
    assert "{role} and {content} only, not {input}" in msg
