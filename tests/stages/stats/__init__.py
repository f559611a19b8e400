"""Tests of synthgen.stages.stats."""
