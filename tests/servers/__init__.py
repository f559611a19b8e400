"""Tests of the CLI against real OpenAI-compatible servers (vLLM on CPU, `transformers serve`)."""
