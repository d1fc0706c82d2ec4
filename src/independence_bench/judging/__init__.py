"""Judging: rubrics, judge prompts, and validation of the judge's replies."""
