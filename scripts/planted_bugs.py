"""Plant the bugs the fast suite once missed (issue 12), one at a time: each must fail the tests.

mutmut cannot make some of them (it does not drop a SQL clause or a dict entry), so they are
planted here by text replacement in a temporary copy of `src/`, and the tests that should catch
each one run against it. Exits 1 when a planted bug survives or its text is no longer found.
Run with the project's Python: `.venv/bin/python scripts/planted_bugs.py`; words given after it
plant only the bugs whose name contains one of them (`... planted_bugs.py schema "never retried"`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENGINE = "src/independence_bench/engine/engine.py"
KEYS = "src/independence_bench/engine/request_keys.py"
STORE = "src/independence_bench/store/store.py"
RUBRIC = "src/independence_bench/judging/rubric.py"
SCORING = "src/independence_bench/scoring/scoring.py"
JUDGE_TESTS = ["tests/judging/test_judge.py", "tests/judging/test_rubric.py"]
CLIENT = "src/independence_bench/clients/openai_compat.py"
OPENROUTER = "src/independence_bench/clients/openrouter.py"

# (bug, file, text, replacement, tests that must fail)
BUGS = [
    ("temperature dropped from the reply-cache key", KEYS,
     '        "temperature": request.temperature,\n', "", ["tests/engine/test_engine_cache.py"]),
    ("seed dropped from the reply-cache key", KEYS,
     '        "seed": request.seed,\n', "", ["tests/engine/test_engine_cache.py"]),
    ("schema dropped from the reply-cache key", KEYS,
     "for name, value in encoded.fields.items()}",
     'for name, value in encoded.fields.items() if name != "response_schema"}',
     ["tests/engine/test_engine_cache.py"]),
    ("the judgment lookup (find_judgment) ignores the rubric hash", STORE,
     'AND rubric_hash = ? "\n            "AND repeat = ?",\n'
     "            (item_id, to_sql(judge_model), rubric_hash, repeat)",
     '"\n            "AND repeat = ?",\n            (item_id, to_sql(judge_model), repeat)',
     ["tests/store/test_store.py", "tests/engine/test_engine_cache.py"]),
    ("failed items never retried", ENGINE,
     'if self.store.item_status(iid) == "done":', "if self.store.item_status(iid) is not None:",
     ["tests/engine/test_engine_cache.py"]),
    ("true accepted as an integer score", RUBRIC,
     "strict=True, frozen=True", "strict=False, frozen=True", JUDGE_TESTS),
    ("empty reasoning accepted", RUBRIC,
     '    if not value.strip():\n        raise ValueError("blank")\n', "", JUDGE_TESTS),
    ("a declined name/gender in one run excuses every run", SCORING,
     "_declined_keys(means, run in declined_runs)", "_declined_keys(means, bool(declined_runs))",
     ["tests/scoring/test_scoring.py"]),
    ("an OpenRouter in-band error stored as a reply (issue 22)", CLIENT,
     "failure = inband_error(response, _seconds(reply.retry_after))", "failure = None",
     ["tests/clients/test_openrouter.py"]),
    ("a judge schema sent without require_parameters (issue 22)", OPENROUTER,
     "    if require_parameters:\n", "    if False:\n", ["tests/clients/test_openrouter.py"]),
]  # fmt: skip


def main(chosen: list[str]) -> int:
    failures = 0
    bugs = [bug for bug in BUGS if not chosen or any(word in bug[0] for word in chosen)]
    if not bugs:
        print(f"no planted bug's name contains {' or '.join(chosen)}")
        return 2
    with tempfile.TemporaryDirectory(prefix="aib-planted-") as tmp:
        copy = Path(tmp)
        for part in ("src", "tests", "pyproject.toml"):
            source = ROOT / part
            if source.is_dir():
                shutil.copytree(source, copy / part)
            else:
                shutil.copy(source, copy / part)
        env = {**os.environ, "PYTHONPATH": str(copy / "src")}
        for bug, path, text, replacement, tests in bugs:
            target = copy / path
            original = target.read_text()
            if original.count(text) != 1:
                print(f"not found  {bug} ({path} changed: update this script)")
                failures += 1
                continue
            target.write_text(original.replace(text, replacement))
            try:
                result = subprocess.run(
                    [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *tests],
                    cwd=copy,
                    env=env,
                    capture_output=True,
                    check=False,
                )
            finally:
                target.write_text(original)
            caught = result.returncode == 1  # 1: tests failed; anything else is not a catch
            failures += not caught
            print(f"{'caught   ' if caught else 'MISSED   '} {bug}  ({' '.join(tests)})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
