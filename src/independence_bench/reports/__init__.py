"""Reports: what users read, one module or package per thing they see, in import order —
`options` (what the reading commands take), `format` (the one number format and terminal
tables), `leaderboard`, `analyses` (judges, compare, items, configs), `report` (a suite's
report gathered from the store), `markdown` (LEADERBOARD.md), `exports` (results.json/.csv),
`charts` and `viewer`. A package keeps its parts private and re-exports what others use."""
