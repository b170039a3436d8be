"""The pieces of trimd's benchmark harness (bench/run)."""
