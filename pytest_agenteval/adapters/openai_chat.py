"""The ``openai_chat`` adapter: evaluate a system prompt on an OpenAI-compatible model."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

from ..model.config import OpenAIChatTarget
from ..privacy import clip
from .base import AgentError, AgentReply, TurnRequest

if TYPE_CHECKING:
    from openai import AsyncOpenAI

__all__ = ["OpenAIChatAdapter", "make_client"]


def make_client(target: OpenAIChatTarget) -> AsyncOpenAI:
    from openai import AsyncOpenAI

    key = os.environ.get(target.api_key_env)
    if not key:
        raise ValueError(f"target.api_key_env: environment variable {target.api_key_env} is not"
                         " set; export it (any non-empty value for a local server)")
    return AsyncOpenAI(api_key=key, base_url=target.base_url, max_retries=target.retries,
                       timeout=target.timeout_s)


class OpenAIChatAdapter:
    """System prompt (plus this turn's knowledge, fenced as data) + history + input."""

    def __init__(self, target: OpenAIChatTarget, client: AsyncOpenAI) -> None:
        self.target = target
        self.client = client

    def messages(self, request: TurnRequest) -> list[dict[str, str]]:
        system = self.target.system_prompt
        if request.knowledge is not None:
            facts = json.dumps(request.knowledge, ensure_ascii=False, indent=2)
            system += f"\n\n<knowledge>\n{facts}\n</knowledge>"
        out = [{"role": "system", "content": system}] if system else []
        out += [{"role": h["role"], "content": h["content"]} for h in request.history]
        out.append({"role": "user", "content": request.input})
        return out

    async def send(self, request: TurnRequest) -> AgentReply:
        import openai

        kwargs: dict[str, Any] = {"model": self.target.model, "messages": self.messages(request)}
        if self.target.temperature is not None:
            kwargs["temperature"] = self.target.temperature
        if self.target.max_tokens is not None:
            kwargs["max_tokens"] = self.target.max_tokens
        try:
            completion = await self.client.chat.completions.create(**kwargs)
        except openai.APITimeoutError:
            raise AgentError("timeout", f"no reply within {self.target.timeout_s:g} s") from None
        except openai.APIStatusError as exc:
            raise AgentError("http_status", clip(f"HTTP {exc.status_code}: {exc.message}", 300),
                             exc.status_code) from None
        except openai.APIConnectionError as exc:
            raise AgentError("connection", f"{type(exc).__name__}: {exc}") from None
        except (openai.APIResponseValidationError, ValueError, TypeError) as exc:
            raise AgentError("bad_body", clip(f"{type(exc).__name__}: {exc}", 300)) from None
        choices = getattr(completion, "choices", None) or []
        content = choices[0].message.content if choices else None
        if not isinstance(content, str):
            raise AgentError("bad_body", "the completion has no text content")
        return AgentReply(output=content, raw=None)

    async def aclose(self) -> None:
        await self.client.close()
