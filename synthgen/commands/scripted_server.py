"""`synthgen scripted-server`: a scripted (not a model) OpenAI-compatible server for tests and demos."""

from __future__ import annotations

from typing import List, Optional

import typer

from synthgen.scripted.launch import SCRIPTED_SERVER_HELP


def register(app: typer.Typer) -> None:
    @app.command("scripted-server", help=SCRIPTED_SERVER_HELP)
    def scripted_server(
        host: str = typer.Option("127.0.0.1", help="Address to listen on."),
        port: int = typer.Option(8000, help="Port (0: a free one; the URL is printed)."),
        seed: int = typer.Option(0, help="Seed: same seed and requests, same answers."),
        model: Optional[List[str]] = typer.Option(None, help="Model names to serve (repeatable)."),
        responder: str = typer.Option("auto", help="auto (the problem bank), bank, or echo."),
        latency: str = typer.Option("fixed", help="Latency distribution: fixed or lognormal."),
        latency_s: float = typer.Option(0.0, help="Fixed latency, or the lognormal's median, in seconds."),
        latency_sigma: float = typer.Option(1.0, help="Lognormal shape (sigma of the log)."),
        latency_max_s: Optional[float] = typer.Option(None, help="Cap on one answer's latency."),
        error_rate: float = typer.Option(0.0, help="Share of requests answered with HTTP 500."),
        rate_limit_rate: float = typer.Option(0.0, help="Share of requests answered with HTTP 429."),
        hang_rate: float = typer.Option(0.0, help="Share of requests that hang, then drop the connection."),
        hang_s: float = typer.Option(3600.0, help="How long a hang lasts."),
        truncation_rate: float = typer.Option(0.0, help="Share of answers cut short (finish_reason length)."),
        garbage_rate: float = typer.Option(0.0, help="Share of answers replaced by junk text."),
        reject_n: bool = typer.Option(False, "--reject-n", help="Refuse n > 1, like servers without it."),
        reasoning_field: str = typer.Option("reasoning", help="reasoning, reasoning_content (older vLLM) or both."),
    ) -> None:
        from synthgen.scripted.launch import scripted_server_command

        scripted_server_command(
            host=host, port=port, seed=seed, model=list(model) if model else None, latency=latency,
            latency_s=latency_s, latency_sigma=latency_sigma, latency_max_s=latency_max_s, error_rate=error_rate,
            rate_limit_rate=rate_limit_rate, hang_rate=hang_rate, hang_s=hang_s, truncation_rate=truncation_rate,
            garbage_rate=garbage_rate, reject_n=reject_n, reasoning_field=reasoning_field, responder=responder,
        )
