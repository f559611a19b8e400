"""The OpenAI-compatible LLM client and everything it uses: cache, errors, HTTP, preflight, slots, usage, settings."""
