"""Tests of synthgen.evals."""
