"""Tests of synthgen.stages."""
