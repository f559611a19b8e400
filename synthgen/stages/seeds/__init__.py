"""`synthgen seeds`: code snippets (seeds) from source trees, starcoderdata-style Parquet or whole solutions."""
