"""`synthgen filter`: validity, the pass-rate band, contamination and near-duplicate removal."""
