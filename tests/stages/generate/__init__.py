"""Tests of synthgen.stages.generate."""
