"""Tests of synthgen.demo."""
