"""Conversations: the exact messages a scenario sends, and replies read back."""
