"""What many tests share: problem rows, CLI argument lists, stand-in servers, probes and corpora."""
