"""`python -m synthgen.scripted --help`: the scripted server (NOT a model) without the main CLI."""

import sys

from synthgen.scripted.launch import main

if __name__ == "__main__":
    sys.exit(main())
