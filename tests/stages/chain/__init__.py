"""Tests of synthgen.stages.chain."""
