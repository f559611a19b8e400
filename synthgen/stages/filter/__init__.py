"""`synthgen filter`: validity, the pass-rate band, benchmark contamination and near-duplicate removal."""
