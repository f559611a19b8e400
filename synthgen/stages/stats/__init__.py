"""`synthgen stats`: a run's numbers from whatever stages it has, and the problem sets it offers."""
