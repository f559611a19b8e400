"""The policy as the student of the generation loop: the trainer's own model, or a server that serves it.

`PolicyLLM` is the `llm` TurnRunner (synthgen.turns.turn) asks online: teacher requests go to the
teacher's OpenAI-compatible server (LLMClient, with its retries and request cache), student ones to
the policy: `InProcessStudent` samples the model being trained, in this process, while training
waits (no server; one process only); `ServerStudent` asks a server of the policy: TRL's vLLM server
(`--use-vllm --vllm-mode server`), which TRL keeps at the current weights, or a server of the
checkpoints written every `--online-student-sync-every` steps. Every request names `policy_step`
(the step whose weights should answer: vLLM ignores the field, the scripted server's student
follows a learning curve with it), and so does its cache key: no answer is replayed for another policy.
"""

from __future__ import annotations

import asyncio
import threading

from synthgen.llm.client import Completion, LLMClient, base_seed


class PolicyLLM:
    """The `llm` TurnRunner uses online: the teacher's client for the teacher, the policy for the student."""

    def __init__(self, teacher: LLMClient, student):
        self.teacher, self.student = teacher, student

    @property
    def usage(self):
        return self.teacher.usage

    async def complete(
        self, role: str, messages: list[dict], n: int = 1, *, key: str = "", priority: float = 0.0
    ) -> list[Completion]:
        client = self.teacher if role == "teacher" else self.student
        return await client.complete(role, messages, n, key=key, priority=priority)

    async def preflight(self, wait_s: float = 0) -> None:
        await self.teacher.preflight(wait_s)
        await self.student.preflight(wait_s)

    async def aclose(self) -> None:
        await self.teacher.aclose()
        await self.student.aclose()


class InProcessStudent:
    """Samples the trainer's model in this process; answers depend only on (weights, key)."""

    def __init__(self, trainer, *, temperature: float, max_tokens: int):
        self.trainer, self.temperature, self.max_tokens = trainer, temperature, max_tokens
        self.policy_step = 0
        self._lock = threading.Lock()  # one generation at a time: the model is shared

    async def complete(self, role, messages, n, *, key: str = "", priority: float = 0.0) -> list[Completion]:
        # One generation at a time whatever the priority (the model is shared). A thread, so that
        # teacher requests of other turns keep flowing while the model samples.
        return await asyncio.to_thread(self._generate, messages, n, key)

    def _generate(self, messages: list[dict], n: int, key: str) -> list[Completion]:
        from synthgen.train.evaluation import policy_sampler

        # Seeded by the request key: the same request samples the same answers (resume), and the
        # training run's own random stream is not moved.
        seed = base_seed(key) or 0
        with (
            self._lock,
            policy_sampler(
                self.trainer, temperature=self.temperature, max_new_tokens=self.max_tokens, batch=n, seed=seed
            ) as generate,
        ):
            [answers] = generate([messages], n)
        name = f"policy@step-{self.policy_step}"
        return [
            Completion("truncated" if cut else "ok", text, "", "length" if cut else "stop", 0, 0, 0.0, model=name)
            for text, cut in answers
        ]

    async def preflight(self, wait_s: float = 0) -> None:
        return None

    async def aclose(self) -> None:
        return None


class ServerStudent(LLMClient):
    """The policy behind an OpenAI-compatible server (`role` is a RoleSettings for it); its request
    bodies also name the policy step that should answer."""

    policy_step = 0

    def __init__(self, role, llm_settings, **kwargs):
        super().__init__(role, role, llm_settings, **kwargs)

    def _body(self, settings, messages, n, seed=None):
        body = super()._body(settings, messages, n, seed)
        body["policy_step"] = int(self.policy_step)
        return body

    async def complete(self, role, messages, n=1, *, key: str = "", priority: float = 0.0) -> list[Completion]:
        return await super().complete(role, messages, n, key=f"{key}@step-{self.policy_step}", priority=priority)
