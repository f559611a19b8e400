"""Tests of synthgen.stages.seeds."""
