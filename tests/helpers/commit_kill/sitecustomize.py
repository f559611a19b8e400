"""Loaded at start-up by a process whose PYTHONPATH begins with this folder: see __init__.py here."""

from tests.helpers.commit_kill import install

install()
