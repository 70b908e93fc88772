"""Unit tests of request templates and response paths (pytest_agenteval/adapters/_template.py)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_agenteval.adapters._template import MISSING, dig, render

VALUES: dict[str, Any] = {
    "input": "这车跑了多少公里",
    "history": [{"role": "user", "content": "你好"}],
    "knowledge": {"车况": "良好", "mileage": 3.37},
    "extra": {"shop": "S-01", "deep": {"level": 2}, "none": None, "my-key": "dash"},
    "conversation_id": None,
    "case_id": "VEHICLE_INFO-001",
    "turn_index": 0,
}


# --- a whole-string placeholder keeps the value's type --------------------------------------


@pytest.mark.parametrize("template, expected", [
    ("{history}", [{"role": "user", "content": "你好"}]),
    ("{knowledge}", {"车况": "良好", "mileage": 3.37}),
    ("{conversation_id}", None),
    ("{turn_index}", 0),
    ("{input}", "这车跑了多少公里"),
    ("{extra}", VALUES["extra"]),
    ("{extra.shop}", "S-01"),
    ("{extra.deep.level}", 2),
    ("{extra.my-key}", "dash"),
    ("{extra.absent}", None),
    ("{extra.shop.deeper}", None),
    ("{unknown}", None),
])
def test_whole_placeholder_keeps_type(template: str, expected: Any) -> None:
    assert render(template, VALUES) == expected
    assert type(render(template, VALUES)) is type(expected)


def test_whole_placeholder_returns_the_same_object() -> None:
    assert render("{history}", VALUES) is VALUES["history"]


# --- inside text the value is formatted as text ---------------------------------------------


@pytest.mark.parametrize("template, expected", [
    ("问：{input}", "问：这车跑了多少公里"),
    ("case {case_id} turn {turn_index}", "case VEHICLE_INFO-001 turn 0"),
    ("k={knowledge}", 'k={"车况": "良好", "mileage": 3.37}'),
    ("h={history}", 'h=[{"role": "user", "content": "你好"}]'),
    ("cid=[{conversation_id}]", "cid=[]"),
    ("n=[{extra.none}]", "n=[]"),
    ("x{unknown}y", "xy"),
    ("{extra.shop}/{extra.deep.level}", "S-01/2"),
    ("{extra.deep}{turn_index}", '{"level": 2}0'),
    ("flag={flag}", "flag=true"),
    (" {input}", " 这车跑了多少公里"),
])
def test_placeholder_inside_text_is_text(template: str, expected: str) -> None:
    assert render(template, {**VALUES, "flag": True}) == expected


# --- escapes and non-placeholders -----------------------------------------------------------


@pytest.mark.parametrize("template, expected", [
    ("{{input}}", "{input}"),
    ("{{{case_id}}}", "{VEHICLE_INFO-001}"),
    ('{{"q": "{input}"}}', '{"q": "这车跑了多少公里"}'),
    ("a}}b{{c", "a}b{c"),
    ("{ input }", "{ input }"),
    ("{1abc}", "{1abc}"),
    ("{", "{"),
    ("}{", "}{"),
    ("", ""),
])
def test_escapes_and_literals(template: str, expected: str) -> None:
    assert render(template, VALUES) == expected


def test_values_are_not_rendered_again() -> None:
    values = {"input": "{case_id} {{x}}", "case_id": "C"}
    assert render("{input}", values) == "{case_id} {{x}}"
    assert render("> {input}", values) == "> {case_id} {{x}}"


# --- nested templates -----------------------------------------------------------------------


def test_nested_template() -> None:
    template = {
        "query": "{input}",
        "session": {"id": "{conversation_id}", "tag": "t-{turn_index}"},
        "messages": ["{history}", {"role": "user", "content": "{input}"}],
        "meta": {"shop": "{extra.shop}", "n": 3, "ok": True, "nil": None},
        "{input}": "keys are not templates",
    }
    before = copy.deepcopy(template)
    assert render(template, VALUES) == {
        "query": "这车跑了多少公里",
        "session": {"id": None, "tag": "t-0"},
        "messages": [[{"role": "user", "content": "你好"}],
                     {"role": "user", "content": "这车跑了多少公里"}],
        "meta": {"shop": "S-01", "n": 3, "ok": True, "nil": None},
        "{input}": "keys are not templates",
    }
    assert template == before  # the template itself is not changed


def test_history_item_shape() -> None:
    entry = {"role": "assistant", "content": "您好"}
    assert render({"speaker": "{role}", "text": "{content}"}, entry) == {
        "speaker": "assistant", "text": "您好"}


# --- dig ------------------------------------------------------------------------------------

BODY: dict[str, Any] = {
    "choices": [{"message": {"content": "您好", "role": "assistant"}},
                {"message": {"content": "second"}}],
    "data": {"reply": "ok", "intent": {"code": 9, "name": None}, "0": "zero-key"},
    "empty": [],
}


@pytest.mark.parametrize("path, expected", [
    ("choices.0.message.content", "您好"),
    ("choices.1.message.content", "second"),
    ("choices.-1.message.content", "second"),
    ("choices.-2.message.role", "assistant"),
    ("data.reply", "ok"),
    ("data.intent.code", 9),
    ("data.intent.name", None),
    ("data.0", "zero-key"),
    ("empty", []),
])
def test_dig_finds(path: str, expected: Any) -> None:
    assert dig(BODY, path) == expected


@pytest.mark.parametrize("path", [
    "choices.2.message.content",
    "choices.-3",
    "empty.0",
    "data.missing",
    "missing",
    "data.reply.text",
    "data.intent.name.x",
    "choices.first",
    "choices.1.5",
    "data.intent.code.0",
    "",
])
def test_dig_missing(path: str) -> None:
    assert dig(BODY, path) is MISSING


def test_dig_into_top_level_list_and_scalar() -> None:
    assert dig([10, 20], "1") == 20
    assert dig("text", "0") is MISSING
    assert dig(None, "a") is MISSING


# --- properties -----------------------------------------------------------------------------

_no_brace_text = st.text(alphabet=st.characters(blacklist_characters="{}"), max_size=20)
_leaf = (st.none() | st.booleans() | st.integers()
         | st.floats(allow_nan=False) | _no_brace_text)
_plain_templates = st.recursive(
    _leaf,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner,
                                                                 max_size=4),
    max_leaves=20,
)


@given(_plain_templates)
def test_template_without_placeholders_is_identity(template: Any) -> None:
    assert render(template, VALUES) == template


@given(st.text(alphabet=st.characters(blacklist_characters="{}"), max_size=30))
def test_text_with_escaped_braces_only(text: str) -> None:
    assert render("{{" + text + "}}", VALUES) == "{" + text + "}"


_key = st.text(alphabet=st.characters(blacklist_characters="."), max_size=6)
_nested = st.recursive(
    st.none() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_key, inner, max_size=4),
    max_leaves=25,
)


@given(st.data())
def test_dig_follows_a_path_built_from_the_structure(data: st.DataObject) -> None:
    root = data.draw(_nested.filter(lambda v: isinstance(v, dict | list) and len(v) > 0))
    node: Any = root
    parts: list[str] = []
    while isinstance(node, dict | list) and node and (not parts or data.draw(st.booleans())):
        if isinstance(node, dict):
            key = data.draw(st.sampled_from(sorted(node)))
            parts.append(key)
            node = node[key]
        else:
            index = data.draw(st.integers(-len(node), len(node) - 1))
            parts.append(str(index))
            node = node[index]
    assert dig(root, ".".join(parts)) is node


@given(st.lists(st.integers(), max_size=5), st.integers(-10, 10))
def test_dig_list_index_matches_python_or_missing(items: list[int], index: int) -> None:
    found = dig({"xs": items}, f"xs.{index}")
    if -len(items) <= index < len(items):
        assert found == items[index]
    else:
        assert found is MISSING


# --- render against a plain reference ---------------------------------------------------

def _reference(template: Any, values: dict[str, Any]) -> Any:
    """What ``render`` means, written plainly (a regular expression's substitution)."""
    import re

    from pytest_agenteval.adapters._template import _PLACEHOLDER, _as_text, _lookup

    if isinstance(template, dict):
        return {k: _reference(v, values) for k, v in template.items()}
    if isinstance(template, list):
        return [_reference(v, values) for v in template]
    if not isinstance(template, str):
        return template
    whole = _PLACEHOLDER.fullmatch(template)
    if whole and whole.group(1):
        return _lookup(whole.group(1), values)

    def sub(m: re.Match[str]) -> str:
        if m.group(0) in ("{{", "}}"):
            return m.group(0)[0]
        return _as_text(_lookup(m.group(1), values))

    return _PLACEHOLDER.sub(sub, template)


_FRAGMENTS = st.sampled_from(["{input}", "{case_id}", "{extra.shop}", "{extra.deep.level}",
                              "{history}", "{knowledge}", "{turn_index}", "{conversation_id}",
                              "{unknown}", "{{", "}}", "{", "}", "x", " ", "价格", "{1a}",
                              "{extra.my-key}", "{{input}}"])
_STRINGS = st.lists(_FRAGMENTS, max_size=6).map("".join)
_TEMPLATES = st.recursive(
    st.one_of(_STRINGS, st.integers(), st.booleans(), st.none(), st.floats(allow_nan=False)),
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.sampled_from(["a", "q", "{input}"]), inner,
                                            max_size=3)),
    max_leaves=12)


def _typed(value: Any) -> Any:
    """``value`` with the type of every node, to compare types as well as values."""
    if isinstance(value, dict):
        return ("dict", {k: _typed(v) for k, v in value.items()})
    if isinstance(value, list):
        return ("list", [_typed(v) for v in value])
    return (type(value).__name__, value)


@given(_TEMPLATES)
def test_a_template_renders_as_its_plain_reference(template: Any) -> None:
    """The compiled template (its placeholders found once) fills as the plain definition."""
    from pytest_agenteval.adapters._template import compiled

    fill = compiled(template)
    assert _typed(fill(VALUES)) == _typed(_reference(template, VALUES))
    assert _typed(fill({})) == _typed(_reference(template, {}))


def test_a_compiled_whole_placeholder_is_the_value_itself() -> None:
    from pytest_agenteval.adapters._template import compiled

    assert compiled("{history}")(VALUES) is VALUES["history"]
    assert compiled({"h": ["{knowledge}"]})(VALUES)["h"][0] is VALUES["knowledge"]
