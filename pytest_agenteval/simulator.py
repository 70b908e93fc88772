"""The simulated user of ``simulate:`` scenarios: an LLM plays a persona toward a goal.

One structured call per user message, through the judge's client (so the
same output ladder, retries, budget and re-asks apply) on the ``simulator:``
endpoint, which defaults to the judge's, at temperature 0. The agent's
replies reach the simulator only as fenced data, like the judge's.

The simulator can be wrong too, and its faults are its own, never the
agent's; each move is checked deterministically:

- ``broke_character``: the message speaks as an AI or a model;
- ``invented_fact``: the message gives a phone number the persona does not hold;
- ``stopped_early``: its first own message (turn 0, or turn 1 after the scenario's
  ``opening``) already ends the conversation.

A move ends the conversation with ``action`` ``stop`` (the goal reached, or the
user gives up), ``transfer`` (the agent handed over to a person) or
``out_of_scope`` (the agent said it cannot help); the scenario's tokens
(``###STOP###`` …) in the message mean the same, and are cut from it.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from .judge import prompt
from .judge.client import Asked, JudgeClient
from .judge.rubric import ContractError
from .privacy import whole
from .rules._text import normalize

if TYPE_CHECKING:
    from .model.cases import Simulate
    from .model.config import JudgeConfig

__all__ = ["Move", "Simulator"]

Action = Literal["continue", "stop", "transfer", "out_of_scope"]
_ACTIONS: tuple[str, ...] = ("continue", "stop", "transfer", "out_of_scope")
_BROKE = re.compile(r"作为(一个|一名)?(AI|人工智能|语言模型|助手)"
                    r"|我是(一个|一名)?(AI|人工智能|语言模型)"
                    r"|as an ai|language model|I am an AI|模拟(用户|客户)", re.I)
_PHONE = re.compile(r"(?<!\d)1[3-9]\d{9}(?!\d)")
_SEPARATORS = re.compile(r"[\s\-–—]")

_INSTRUCTIONS = """You play a customer talking with the online customer-service agent of a \
business, in the customer's language (Chinese unless the persona says otherwise).

Persona: {persona}
Goal: {goal}
Facts you hold (reveal one only when the agent asks for it or it serves your goal; never \
state any other fact of yours, never invent a phone number): {facts}

Write the customer's next message: short and natural, one message. Set action:
- "continue" to go on;
- "stop" when your goal is reached or you give up (the message is your goodbye);
- "transfer" when the agent has handed you over to a person;
- "out_of_scope" when the agent said it cannot help with your request.
Never say you are an AI or a simulation."""


@dataclass(frozen=True)
class Move:
    """The simulated user's next message, how it means to go on, and its own faults."""

    message: str
    action: Action
    faults: tuple[str, ...] = ()


def _digits(text: str) -> str:
    return _SEPARATORS.sub("", normalize(text))


def first_own(sim: Simulate) -> int:
    """The turn of the simulator's first own message: the ``opening`` is sent as written."""
    return 1 if sim.opening else 0


def check(move_message: str, action: str, sim: Simulate, turn: int) -> tuple[str, ...]:
    """The simulator's own faults in a move (see the module doc)."""
    faults = []
    if _BROKE.search(move_message):
        faults.append("broke_character")
    held = {_digits(str(v)) for v in sim.facts.values()}
    invented = [p for p in _PHONE.findall(_digits(move_message)) if p not in held]
    if invented:
        faults.append("invented_fact")
    if turn == first_own(sim) and action != "continue":
        faults.append("stopped_early")
    return tuple(faults)


class Simulator:
    """Built on the engine's loop, one per process."""

    def __init__(self, cfg: JudgeConfig) -> None:
        self.cfg = cfg
        self.client = JudgeClient(cfg, os.environ.get(cfg.api_key_env, ""))

    async def aclose(self) -> None:
        await self.client.aclose()

    async def next(self, sim: Simulate, dialog: list[dict[str, str]], turn: int) -> Asked[Move]:
        """The user's message for ``turn`` (0-based), given the dialog so far."""
        instructions = _INSTRUCTIONS.format(
            persona=sim.persona.strip(), goal=sim.goal.strip(),
            facts=json.dumps(sim.facts, ensure_ascii=False) if sim.facts else "none")
        schema: dict[str, Any] = {"type": "object", "properties": {
            "message": {"type": "string"},
            "action": {"type": "string", "enum": list(_ACTIONS)}},
            "required": ["message", "action"], "additionalProperties": False}
        data = {"conversation": [
            {"role": "customer" if m["role"] == "user" else "agent", "content": m["content"]}
            for m in dialog]}
        msgs = prompt.messages(instructions, data, "Write the customer's next message.",
                               schema, {"message": "这车多少钱？", "action": "continue"})

        def parse(d: Any) -> Move:
            if not isinstance(d, dict):
                raise ContractError("the reply is not a JSON object")
            message, action = d.get("message"), d.get("action")
            if not isinstance(message, str):
                raise ContractError("message: missing or not a string")
            message = whole(message)  # half a character from the model: no text to send
            if action not in _ACTIONS:
                raise ContractError(f"action: {json.dumps(action, ensure_ascii=False)} is not "
                                    f"one of {', '.join(_ACTIONS)}")
            for token, act in ((sim.stop_token, "stop"), (sim.transfer_token, "transfer"),
                               (sim.out_of_scope_token, "out_of_scope")):
                if token and token in message:
                    message, action = message.replace(token, "").strip(), act
            if not message.strip() and action == "continue":
                raise ContractError("message: empty (write the customer's next message)")
            return Move(message.strip(), action, check(message, action, sim, turn))  # type: ignore[arg-type]

        return await self.client.ask(msgs, schema, "user_turn", parse)
