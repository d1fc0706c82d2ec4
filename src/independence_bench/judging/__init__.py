"""Judging: rubrics (one model per rubric is both the JSON schema sent to the judge and the
validator of its reply), judge prompts, and the repair loop."""
