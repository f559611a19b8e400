"""Settings -> LLM client configuration, in one place for every stage that talks to the teacher."""

from __future__ import annotations

from synthgen.config.common import RoleSettings


def role_config(role: RoleSettings):
    from synthgen.llm import RoleConfig

    return RoleConfig(
        base_url=role.base_url,
        model=role.model,
        api_key=role.api_key,
        reasoning_effort=role.reasoning_effort,
        temperature=role.temperature,
        top_p=role.top_p,
        max_tokens=role.max_tokens,
        timeout_s=role.timeout_s,
    )


def client_config(settings):
    """A ClientConfig from any settings with `teacher`, `student`, `llm` and `max_in_flight`."""
    from synthgen.llm import ClientConfig

    return ClientConfig(
        teacher=role_config(settings.teacher),
        student=role_config(settings.student),
        max_in_flight=settings.max_in_flight,
        max_attempts=settings.llm.max_attempts,
        backoff_initial_s=settings.llm.backoff_initial_s,
        backoff_max_s=settings.llm.backoff_max_s,
        use_n=settings.llm.use_n,
    )
