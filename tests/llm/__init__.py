"""Tests of synthgen.llm."""
