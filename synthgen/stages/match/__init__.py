"""`synthgen match`: one problem set subsampled to another's pass-rate histogram."""
