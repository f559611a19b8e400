"""`synthgen seeds`: code snippets from source trees, starcoderdata-style Parquet or solutions."""
