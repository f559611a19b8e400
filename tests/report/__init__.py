"""Tests of synthgen.report."""
