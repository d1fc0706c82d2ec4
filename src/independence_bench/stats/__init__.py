"""Statistics, in four modules: `core` (estimates, percentiles, correlation, `Resampling`; no
opinion about the benchmark and nothing heavy imported), `bootstrap` (the hierarchical
bootstrap with its intervals, paired differences and rank intervals), `agreement` (alpha,
Spearman, test-retest, judge calibration) and `analysis` (the leaderboard and the other
analyses as pure functions of judged items, with per-metric discrimination)."""
