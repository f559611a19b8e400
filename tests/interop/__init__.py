"""Tests of synthgen.interop: the exports, rewards and curricula in verl, verifiers and TRL themselves."""
