"""Tests of synthgen.stages.calibrate."""
