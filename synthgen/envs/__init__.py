"""The four RL environments (induction, abduction, deduction, fuzzing) behind one contract."""
