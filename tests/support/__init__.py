"""The tests' doubles and shared helpers, outside the package so that no wheel ships them.

The scripted OpenAI-compatible loopback server (`mock_server` and its `mock_*` parts,
`scripted_v3`) and the helpers several test folders share (`cli_home`, `child_process`,
`report_fixtures`, `store_views`, ...). Tests, benchmarks and scripts import them as `support`
with `tests/` on the path (pytest's `pythonpath` setting; the benchmarks add it themselves).
"""
