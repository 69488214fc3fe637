"""What each game's pipeline needs besides its entry module: learner wiring, evaluation,
plots and reports, importable by benchmarks, notebooks and tests."""
