"""The one OpenAI-compatible LLM client and what it uses: cache, retries, slots, preflight.

client.py is the client and its request slots; cache (and sampling seeds), errors, http, preflight
(and `config show --probe`) and response (and usage) are its parts; settings.py holds the roles' and
the client's settings.
"""
