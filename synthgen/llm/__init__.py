"""The one OpenAI-compatible LLM client and what it uses: cache, retries, slots, preflight.

client.py (with its request slots), cache and sampling seeds, errors, http, preflight (and `config
show --probe`), response (and usage), settings.
"""
