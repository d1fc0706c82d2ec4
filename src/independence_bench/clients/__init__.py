"""Clients: the one model protocol and everything that reaches a model over it."""
