"""Tests of synthgen.stages.match."""
