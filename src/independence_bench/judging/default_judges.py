"""The judges a run gets when `--judge` is not given, named once.

`workflows/plan.py`'s `choose_judge` picks between them (the one place a judge is chosen);
`aib run --help` shows them from here, which imports nothing, so `--help` stays light.
"""

DEFAULT_JUDGE = "google/gemini-3-flash-preview"
"""The judge when `--judge` is not given and a tested model is on OpenRouter: a strong one."""
LOCAL_JUDGE = "embedded:qwen2.5-coder-1.5b"
"""The judge when `--judge` is not given and no tested model is on OpenRouter: the embedded
smoke-test judge, so no transcript leaves for an API the command did not name."""
