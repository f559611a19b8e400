"""The one OpenAI-compatible LLM client (client.py, with its request slots) and its parts: cache and
sampling seeds, errors, http, preflight (and `config show --probe`), response (and usage), settings.
"""
