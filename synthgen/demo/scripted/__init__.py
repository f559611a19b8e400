"""The scripted OpenAI-compatible server: a stand-in for vLLM that is scripted, NOT a model.

It lets the pipeline and its tests run without a GPU. See server.py (HTTP and response shape),
faults.py (injected latency and failures; every knob is a field of settings.ScriptedServerSettings),
responder.py (the pluggable answer logic), bank.py (the teacher and student that answer by default)
and launch.py (start in a thread, a subprocess or the foreground).
"""

from synthgen.demo.scripted.launch import make_responder, scripted_server_command, start_scripted_server
from synthgen.demo.scripted.responder import EchoResponder, ScriptedReply
from synthgen.demo.scripted.settings import ScriptedServerSettings

__all__ = [
    "EchoResponder",
    "ScriptedReply",
    "ScriptedServerSettings",
    "make_responder",
    "scripted_server_command",
    "start_scripted_server",
]
