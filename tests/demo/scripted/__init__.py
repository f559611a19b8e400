"""Tests of synthgen.demo.scripted."""
