"""Tests of synthgen.servers."""
