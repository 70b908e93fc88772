"""Project conftest: a custom rule type, registered the way a user's project does it.

`house_style` is an example of a business rule that no built-in type covers:
the reply must address the user politely (「您」) and must not use words the
brand has banned. Use it from a case (`rules: [{type: house_style}]`) or from
the ledger (`check: house_style`).
"""

from __future__ import annotations

import pytest_agenteval as agenteval


class HouseStyle(agenteval.Params):
    polite: tuple[str, ...] = ("您",)
    banned: tuple[str, ...] = ("亲", "哈哈", "包您满意")


@agenteval.rule("house_style", params=HouseStyle)
def house_style(p: HouseStyle, turn: agenteval.TurnView) -> agenteval.RuleOutcome:
    """The reply uses the polite form and none of the brand's banned words."""
    banned = [w for w in p.banned if w in turn.reply]
    if banned:
        return agenteval.RuleOutcome.failed(f"banned words {banned}", ", ".join(banned))
    if not any(w in turn.reply for w in p.polite):
        return agenteval.RuleOutcome.failed(f"no polite form ({'/'.join(p.polite)})",
                                            turn.reply)
    return agenteval.RuleOutcome.passed("house style kept")
