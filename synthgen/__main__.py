"""Allow `python -m synthgen ...`: SIGTERM is handled before the (slow) imports of the CLI, so a
signal during start-up exits 143 (Ctrl+C: 130) in one line, as it does later."""

import os
import sys

from synthgen.errors import Interrupted, stop_on_sigterm

if __name__ == "__main__":
    stop_on_sigterm()
    try:
        from synthgen.cli.app import main
    except Interrupted as exc:
        print(f"synthgen: {exc}", file=sys.stderr)
        sys.exit(128 + exc.signum)
    except KeyboardInterrupt:
        print("synthgen: interrupted", file=sys.stderr, flush=True)
        # Not sys.exit: a Ctrl+C that lands in code an extension module runs through CPython's
        # PyRun_* calls at import sets its "unhandled KeyboardInterrupt" flag, and the interpreter
        # would then kill itself with SIGINT on the way out (exit -2, not 130).
        os._exit(130)
    main()
