"""Reports: leaderboards, insight tables, Markdown, CSV/JSON, charts and the viewer."""
