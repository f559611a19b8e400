"""Tests of synthgen.settings."""
