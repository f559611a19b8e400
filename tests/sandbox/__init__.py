"""Tests of synthgen.sandbox."""
