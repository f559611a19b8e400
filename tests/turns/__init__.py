"""Tests of synthgen.turns."""
