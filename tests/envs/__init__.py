"""Tests of synthgen.envs."""
