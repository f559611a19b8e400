"""`synthgen calibrate`: a problem set's pass rates re-measured with another student."""
