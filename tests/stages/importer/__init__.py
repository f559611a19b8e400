"""Tests of synthgen.stages.importer."""
