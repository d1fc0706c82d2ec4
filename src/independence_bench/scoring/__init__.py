"""Scoring: metrics from judgments, and the versioned Independence Index formulas."""
