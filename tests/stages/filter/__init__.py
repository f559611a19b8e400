"""Tests of synthgen.stages.filter."""
