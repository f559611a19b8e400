"""synthgen: verifiable coding problems with a controlled difficulty progression, for RL on code.

Stages (each a `synthgen <stage>` command): seeds -> generate -> filter -> bin -> chain -> train.
"""

__version__ = "0.1.0"
