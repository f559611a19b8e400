"""`synthgen import`: real code-contest problem sets turned into a problems folder `train` reads."""
