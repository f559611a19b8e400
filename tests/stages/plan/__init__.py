"""Tests of synthgen.stages.plan."""
