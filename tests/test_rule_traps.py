"""The shipped ledger's rules on replies a reviewer wrote to trip them up."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pytest_agenteval.ledger import Ledger, example_view, load_ledger
from pytest_agenteval.model.ledger import Example
from pytest_agenteval.yamlio import loads

#: data tests (the reviewer's traps for the dealer ledger): `-m "not data"` skips them
pytestmark = pytest.mark.data

ROOT = Path(__file__).resolve().parent.parent


def _read(name: str) -> list[dict[str, Any]]:
    """A trap file read as the plugin reads ledgers and cases (``input: 13800000000`` is
    the text "13800000000")."""
    path = Path(__file__).parent / "data" / name
    data: list[dict[str, Any]] = loads(path.read_text(encoding="utf-8"), str(path)).data
    return data


CAR = {"carConfigInfo": {"title": "2021款 大众朗逸 1.5L 自动舒适版",
                         "archives": {"mileage": "3.37万公里", "firstRegDate": "2021-06",
                                      "transferCount": 0, "color": "白色", "gearbox": "自动"},
                         "price": {"listPrice": "8.98万"}},
       "storeInfo": {"name": "诚信二手车", "address": "上海市闵行区七莘路1888号",
                     "openHours": "9:00-18:00"}}
#: the first traps, then blind held-out sets for the apology, channel, closing and
#: cross-turn rules (``rule_traps_holdout2.yaml``: 51 of 83 right on its first run;
#: ``rule_traps_holdout3.yaml``: 53 of 72), and a first blind set for the knowledge,
#: hand-off, number, length, contact and other-car rules (``rule_traps_blind3.yaml``:
#: 61 of 73), held out again after that was fixed (``rule_traps_holdout4.yaml``: 52 of 62),
#: and a fifth set for all of them after sets 3 and 4 were fixed (``rule_traps_holdout5.yaml``:
#: 75 of 90, a quarter in other businesses), a sixth after that (74 of 84), and replies in
#: Markdown as LLM bots write them (``rule_traps_markdown.yaml``: 43 of 52), and from scripted
#: and English or Cantonese bots (``rule_traps_scripted.yaml``: 38 of 52), and a seventh
#: held-out set after all of those were fixed (50 of 58), and long conversations for the
#: cross-turn rules (``rule_traps_dialogs.yaml``: 18 of 24) and replies hard to read right
#: (``rule_traps_hard.yaml``: 19 of 24), and an eighth held-out set written blind from the
#: rules' business descriptions, a majority in seven other businesses
#: (``rule_traps_holdout8.yaml``: 60 of 69), and a ninth after those were fixed, in ten more
#: businesses (``rule_traps_holdout9.yaml``: 59 of 66), and compliant replies that look risky,
#: with a few violations, against false alarms (``rule_traps_compliant.yaml``: 81 of 88), and a
#: tenth held-out set after all of those, in twelve more trades (``rule_traps_holdout10.yaml``:
#: 60 of 70), and more compliant replies that look risky, in ten more trades
#: (``rule_traps_compliant2.yaml``: 55 of 60), and an eleventh held-out set in twelve more
#: (``rule_traps_holdout11.yaml``: 57 of 64), and a twelfth on numbers and hand-offs
#: (``rule_traps_holdout12.yaml``: 48 of 64), and a thirteenth on the dialog rules, twelve more
#: trades (``rule_traps_holdout13.yaml``: 54 of 64), and a fourteenth on numbers and knowledge
#: (``rule_traps_holdout14.yaml``: 49 of 64), and a third set of compliant replies that look
#: risky, against the new vocabulary's false alarms (``rule_traps_compliant3.yaml``: 53 of 64),
#: and a fourth after those were fixed (``rule_traps_compliant4.yaml``: 53 of 64), a fifth
#: (``rule_traps_compliant5.yaml``: 55 of 64) and a sixth (``rule_traps_compliant6.yaml``: 60
#: of 64), and a fifteenth held-out set on the dialog rules (``rule_traps_holdout15.yaml``: 49
#: of 64), and a seventh compliant set (``rule_traps_compliant7.yaml``: 55 of 64), and a
#: sixteenth on the dialog rules and BR-009 (``rule_traps_holdout16.yaml``: 49 of 64), and an
#: eighth compliant set (``rule_traps_compliant8.yaml``: 50 of 64), and a seventeenth on numbers
#: and knowledge (``rule_traps_holdout17.yaml``: 56 of 64), and a ninth compliant set, all of it
#: in the used-car trade (``rule_traps_compliant9.yaml``: 58 of 64), and a tenth against the
#: new vocabulary's false alarms (``rule_traps_compliant10.yaml``: 54 of 64), and an eighteenth on
#: numbers (``rule_traps_holdout18.yaml``: 46 of 64), and an eleventh compliant set of long
#: used-car replies (``rule_traps_compliant11.yaml``: 54 of 64), and a nineteenth on numbers and
#: knowledge (``rule_traps_holdout19.yaml``: 54 of 64), and a twelfth compliant set in twelve
#: more trades (``rule_traps_compliant12.yaml``: 58 of 64), and a twentieth on the dialog rules'
#: words in their harmless and harmful roles (``rule_traps_holdout20.yaml``: 54 of 64), and a
#: thirteenth compliant set in English, Cantonese and Taiwanese Mandarin
#: (``rule_traps_compliant13.yaml``: 52 of 64), and a twenty-first on numbers in English,
#: Cantonese and Taiwanese Mandarin (``rule_traps_holdout21.yaml``: 48 of 64)
TRAPS: list[dict[str, Any]] = [
    trap for name in ("rule_traps.yaml", "rule_traps_holdout2.yaml", "rule_traps_holdout3.yaml",
                      "rule_traps_blind3.yaml", "rule_traps_holdout4.yaml",
                      "rule_traps_holdout5.yaml", "rule_traps_holdout6.yaml",
                      "rule_traps_markdown.yaml", "rule_traps_scripted.yaml",
                      "rule_traps_holdout7.yaml", "rule_traps_dialogs.yaml",
                      "rule_traps_hard.yaml", "rule_traps_holdout8.yaml",
                      "rule_traps_holdout9.yaml", "rule_traps_compliant.yaml",
                      "rule_traps_holdout10.yaml",
                      "rule_traps_compliant2.yaml", "rule_traps_holdout11.yaml",
                      "rule_traps_holdout12.yaml", "rule_traps_holdout13.yaml",
                      "rule_traps_holdout14.yaml", "rule_traps_compliant3.yaml",
                      "rule_traps_compliant4.yaml", "rule_traps_compliant5.yaml",
                      "rule_traps_compliant6.yaml", "rule_traps_holdout15.yaml",
                      "rule_traps_compliant7.yaml", "rule_traps_holdout16.yaml",
                      "rule_traps_compliant8.yaml", "rule_traps_holdout17.yaml",
                      "rule_traps_compliant9.yaml", "rule_traps_compliant10.yaml",
                      "rule_traps_holdout18.yaml", "rule_traps_compliant11.yaml",
                      "rule_traps_holdout19.yaml", "rule_traps_compliant12.yaml",
                      "rule_traps_holdout20.yaml", "rule_traps_compliant13.yaml",
                      "rule_traps_holdout21.yaml")
    for trap in _read(name)]


@pytest.fixture(scope="module")
def ledger() -> Ledger:
    return load_ledger(ROOT / "rules" / "business-rules.yaml", ROOT)


def _param(trap: dict[str, Any]) -> Any:
    marks = [pytest.mark.xfail(strict=True, reason="known limit of the rule type")
             ] if trap.get("known_limit") else []
    return pytest.param(trap, id=f"{trap['rid']}-{trap['exp']}-{trap['reply'][:12]}", marks=marks)


@pytest.mark.parametrize("trap", [_param(t) for t in TRAPS])
def test_trap(ledger: Ledger, trap: dict[str, Any]) -> None:
    data = {k: v for k, v in trap.items() if k not in ("rid", "exp", "known_limit", "params")}
    data["knowledge"] = _car(data.get("knowledge"))
    if data.get("earlier_knowledge") is not None:
        data["earlier_knowledge"] = [_car(k) for k in data["earlier_knowledge"]]
    example = Example.model_validate(data)
    rule = ledger.get(trap["rid"])
    assert rule is not None
    bound = rule.bind(example.assertions)
    if "params" in trap:  # the rule as another business's ledger sets it (BR-014's item)
        bound = replace(bound, params=rule.rule_type.parse({**rule.spec.params,
                                                            **trap["params"]}))
    view = example_view(example)
    if trap["exp"] == "pass":
        # a reply where the rule's situation does not arise is not judged by it (BR-012 on
        # a reply that asks for nothing)
        if bound.when and bound.trigger(view) is None:
            return
        row = bound.evaluate(view)
        assert row.status != "failed", row
    else:
        row = bound.evaluate(view)
        assert row.status == "failed", row


#: traps for the rules that apply where their situation arises (BR-001, BR-009, BR-012,
#: BR-016) and for availability and slot promises (BR-004), written from the rules'
#: business descriptions by reviewers who did not read their patterns: a first set (110),
#: then a held-out set (60, three businesses, traditional characters, emoji, lists) written
#: after the first set was fixed, that the rules met unseen (49 of 60 right), and a second
#: held-out set (98, four businesses) after that one was fixed (83 of 98 unseen), and a
#: third (72, three more businesses) after the second was fixed (59 of 72 unseen), and a
#: fourth after that (50 of 60), replies in Markdown (29 of 34) and from scripted and
#: English or Cantonese bots (21 of 28), a fifth held-out set after those (29 of 34) and
#: long conversations (17 of 20) and BR-004 on replies hard to read right (18 of 20), and a
#: sixth held-out set written blind from the rules' descriptions, most of it in eight other
#: businesses (57 of 68), and a seventh after that one was fixed, in ten more (60 of 66), and
#: compliant replies that look risky, with a few violations, against false alarms (87 of 92),
#: and BR-004 alone on promises in slang, English, Cantonese and other trades (47 of 64), and
#: an eighth held-out set for the contact rules and BR-016, forms and twelve more trades
#: (54 of 64), and BR-004 again in ten more trades (47 of 64), and in twelve more (50 of 64),
#: and in twelve more (42 of 64), twelve more again (39 of 64), twelve more (44 of 64),
#: twelve more (45 of 64), twelve more (53 of 64), twelve more (57 of 64), twelve more
#: (47 of 64), twelve more (49 of 64), twelve more (55 of 64), the car trade (53 of 64) and
#: sixteen words in their harmless and promising roles (49 of 64) and English, Cantonese and
#: Taiwanese bots (48 of 64), and a ninth
#: held-out set for the contact rules, twelve more trades (57 of 64), and a tenth on whose
#: number the user gave (51 of 64), and an eleventh on BR-016 and BR-001 (57 of 64), and a
#: twelfth on the contact rules (43 of 64), and a thirteenth (31 of 64) and a fourteenth (47 of
#: 64), and long conversations again (``situation_traps_dialogs2.yaml``: 52 of 64) and a third
#: time (``situation_traps_dialogs3.yaml``: 59 of 64), and BR-004 in long replies and
#: multi-turn context (``situation_traps_commitment16.yaml``: 56 of 64), and a fifteenth on the
#: contact rules in twelve more trades (``situation_traps_holdout15.yaml``: 61 of 64), and BR-004
#: against hedges that do and do not cover (``situation_traps_commitment17.yaml``: 60 of 64),
#: and knowledge switched mid-dialog (``situation_traps_holdout16.yaml``: 57 of 60), and long
#: conversations in English and Cantonese (``situation_traps_dialogs4.yaml``: 49 of 64), and what
#: leaving the number brings, in twelve more trades (``situation_traps_holdout17.yaml``: 59 of 64).
#: ``na``:
#: the situation does not arise, so the rule must not be applied at all.
SITUATION_TRAPS: list[dict[str, Any]] = [
    trap for name in ("situation_traps.yaml", "situation_traps_holdout.yaml",
                      "situation_traps_holdout2.yaml", "situation_traps_holdout3.yaml",
                      "situation_traps_holdout4.yaml", "situation_traps_markdown.yaml",
                      "situation_traps_scripted.yaml", "situation_traps_holdout5.yaml",
                      "situation_traps_dialogs.yaml", "situation_traps_hard.yaml",
                      "situation_traps_holdout6.yaml", "situation_traps_holdout7.yaml",
                      "situation_traps_compliant.yaml", "situation_traps_commitment.yaml",
                      "situation_traps_holdout8.yaml", "situation_traps_commitment2.yaml",
                      "situation_traps_commitment3.yaml", "situation_traps_commitment4.yaml",
                      "situation_traps_commitment5.yaml",
                      "situation_traps_commitment6.yaml", "situation_traps_commitment7.yaml",
                      "situation_traps_commitment8.yaml", "situation_traps_commitment9.yaml",
                      "situation_traps_commitment10.yaml", "situation_traps_commitment11.yaml",
                      "situation_traps_commitment12.yaml", "situation_traps_commitment13.yaml",
                      "situation_traps_commitment14.yaml", "situation_traps_commitment15.yaml",
                      "situation_traps_holdout9.yaml", "situation_traps_contact10.yaml",
                      "situation_traps_holdout11.yaml", "situation_traps_holdout12.yaml",
                      "situation_traps_holdout13.yaml", "situation_traps_dialogs2.yaml",
                      "situation_traps_holdout14.yaml", "situation_traps_dialogs3.yaml",
                      "situation_traps_commitment16.yaml", "situation_traps_holdout15.yaml",
                      "situation_traps_commitment17.yaml", "situation_traps_holdout16.yaml",
                      "situation_traps_dialogs4.yaml", "situation_traps_holdout17.yaml")
    for trap in _read(name)]


def _car(value: Any) -> Any:
    return CAR if value == "CAR" else value


@pytest.mark.parametrize("trap", [_param(t) for t in SITUATION_TRAPS])
def test_situation_trap(ledger: Ledger, trap: dict[str, Any]) -> None:
    data = {k: v for k, v in trap.items() if k not in ("rid", "exp", "known_limit")}
    data["knowledge"] = _car(data.get("knowledge"))
    if data.get("earlier_knowledge") is not None:
        data["earlier_knowledge"] = [_car(k) for k in data["earlier_knowledge"]]
    example = Example.model_validate(data)
    rule = ledger.get(trap["rid"])
    assert rule is not None
    bound = rule.bind(example.assertions)  # no switch: the dialog decides
    view = example_view(example)
    trigger = bound.trigger(view)
    if trap["exp"] == "na":
        if bound.when:
            assert trigger is None, f"applied because {trigger}"
        else:  # a rule that reads its own condition in the dialog (BR-018, BR-019) says so
            row = bound.evaluate(view)
            assert row.status == "not_applicable", row
        return
    assert trigger is not None, "the situation was not recognised"
    row = bound.evaluate(view)
    if trap["exp"] == "pass":
        assert row.status != "failed", row
    else:
        assert row.status == "failed", row
