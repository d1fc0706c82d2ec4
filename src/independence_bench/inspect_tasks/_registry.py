"""Inspect's entry point (`[project.entry-points.inspect_ai]`): importing it registers the tasks."""

from independence_bench.inspect_tasks.tasks import adaptive, full, lite, v2, v3

__all__ = ["adaptive", "full", "lite", "v2", "v3"]
