"""synthgen's tests: one package per package of synthgen/, the house rules at the top level."""
