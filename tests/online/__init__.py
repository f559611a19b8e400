"""Tests of synthgen.online."""
