"""The read side's gatherer: every query of the store that a reading command makes.

`aib leaderboard`, `report`, `view`, `judges`, `compare`, `items` and `configs` open the store in
`workflows/` and hand it here; these modules read it and return plain values (results, rows,
spend, standings, the analyses' reports, the viewer's transcripts), computed with `scoring` and
`stats`. `reports/` renders those values and never sees the store. Nothing here writes.
"""
