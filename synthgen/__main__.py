"""Allow `python -m synthgen ...`: SIGTERM is handled before the (slow) imports of the CLI, so a
signal during start-up exits 143 (Ctrl+C: 130) in one line, as it does later."""

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
        print("synthgen: interrupted", file=sys.stderr)
        sys.exit(130)
    main()
