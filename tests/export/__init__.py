"""Tests of synthgen.export."""
