"""Everything `aib leaderboard` shows: the ranking as a table or JSON (`_rows`), the detailed
metrics and chosen names under it (`_details`), and the command's whole output for one judge
or a judge panel (`_output`). The values come from `gathering/`; nothing here opens the store.
"""

from independence_bench.reports.leaderboard._adaptivity import (
    GAP_METHOD,
    adaptivity_json,
    adaptivity_lines,
    adaptivity_markdown,
    gap_text,
)
from independence_bench.reports.leaderboard._details import (
    counted_text,
    detailed_json,
    details_json,
    details_lines,
    format_detailed,
    names_json,
    selection_lines,
)
from independence_bench.reports.leaderboard._evidence_ceiling import (
    EVIDENCE_CEILING,
    evidence_ceiling_note,
)
from independence_bench.reports.leaderboard._output import (
    agreement_json,
    agreement_lines,
    leaderboard_output,
    panel_leaderboard,
    why_undefined,
)
from independence_bench.reports.leaderboard._rows import (
    METRIC_TITLES,
    RANK_NOTE,
    SHORT_TITLES,
    TABLE_METRICS,
    leaders_note,
    rank_text,
    render_table,
    rows_as_json,
)

__all__ = [
    "EVIDENCE_CEILING",
    "GAP_METHOD",
    "METRIC_TITLES",
    "RANK_NOTE",
    "SHORT_TITLES",
    "TABLE_METRICS",
    "adaptivity_json",
    "adaptivity_lines",
    "adaptivity_markdown",
    "agreement_json",
    "agreement_lines",
    "counted_text",
    "detailed_json",
    "details_json",
    "details_lines",
    "evidence_ceiling_note",
    "format_detailed",
    "gap_text",
    "leaderboard_output",
    "leaders_note",
    "names_json",
    "panel_leaderboard",
    "rank_text",
    "render_table",
    "rows_as_json",
    "selection_lines",
    "why_undefined",
]
