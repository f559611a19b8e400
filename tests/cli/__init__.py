"""Tests of synthgen.cli."""
