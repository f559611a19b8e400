"""`synthgen generate`: the multi-turn teacher/student loop over the seeds, and its plan of work."""
