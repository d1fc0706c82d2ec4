"""Statistics: bootstrap intervals, rank intervals, agreement and analyses."""
