"""Learning pipelines, one entry module per game: ``python -m train.<game>``."""
