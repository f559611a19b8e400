"""Allow `python -m synthgen ...`."""

from synthgen.cli import main

if __name__ == "__main__":
    main()
