"""Tests of synthgen.train."""
