"""`python -m synthgen.demo.scripted SETTINGS_JSON`: a process-mode scripted server (NOT a model); people use
`synthgen scripted-server`."""

import sys

from synthgen.demo.scripted.launch import main

if __name__ == "__main__":
    sys.exit(main())
