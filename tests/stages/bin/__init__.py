"""Tests of synthgen.stages.bin."""
