"""Allow `python -m synthgen ...`: SIGTERM and Ctrl+C are handled before the (slow) imports of the
CLI, so a signal during start-up exits 143 (Ctrl+C: 130) in one line, as it does later."""

import os
import signal


def _stop_during_start_up(signum, frame) -> None:
    """Nothing has started yet, so there is nothing to save: say so in one line and leave at once.
    Not an exception: raised inside the import machinery (a module lock's weakref callback, an
    extension's start-up code) it would be printed as ignored, or make CPython re-kill itself."""
    os.write(2, f"synthgen: stopped by {signal.Signals(signum).name} during start-up; nothing had started\n".encode())
    os._exit(128 + signum)


if __name__ == "__main__":
    for _signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(_signum, _stop_during_start_up)
    from synthgen.cli.app import main

    signal.signal(signal.SIGINT, signal.default_int_handler)  # Ctrl+C is KeyboardInterrupt again
    main()  # installs the run's own SIGTERM handler first
