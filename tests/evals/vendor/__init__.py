"""Code vendored for tests (each folder says where it comes from and under which licence)."""
