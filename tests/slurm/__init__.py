"""Tests of synthgen.slurm."""
