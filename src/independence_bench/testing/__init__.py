"""Testing helpers: a scripted OpenAI-compatible loopback server and its behaviours."""
