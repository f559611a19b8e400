"""Tests of synthgen.store."""
