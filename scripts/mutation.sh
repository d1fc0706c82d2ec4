#!/usr/bin/env bash
# Mutation testing with mutmut: plant small bugs in the code that produces numbers and check that
# the fast tests notice. Usage:
#   scripts/mutation.sh [module ...]        modules: scoring judging store engine conversations
#                                           suites bootstrap (default: all of them, one at a time)
# Environment:
#   MUTATION_THRESHOLD  kill rate in percent below which the script fails (default 85)
#   MUTATION_SAMPLE     run every Nth mutant (sorted by name) instead of all (default 1 = all)
#   MUTATION_CHILDREN   parallel mutant runs (default 2)
#   PROJECT_VENV        the project's venv with its dev dependencies (default .venv, which
#                       scripts/test.sh creates)
# mutmut is not a dependency of the package: it lives in its own venv under .mutation/, which
# sees the project's dependencies through a .pth file. Each module runs in a fresh copy of the
# tree under .mutation/work/<module>; the summary and survivors land in .mutation/<module>.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
THRESHOLD=${MUTATION_THRESHOLD:-85}
SAMPLE=${MUTATION_SAMPLE:-1}
CHILDREN=${MUTATION_CHILDREN:-2}
PROJECT_VENV=${PROJECT_VENV:-$ROOT/.venv}
TOOL_VENV=$ROOT/.mutation/venv
MUTMUT_VERSION=3.8.1

# module -> source path to mutate (under src/independence_bench/) and the tests that exercise it.
# Only these tests run against each mutant, which keeps a module's run within minutes.
declare -A SOURCES=(
  [scoring]="scoring/"
  [judging]="judging/"
  [store]="store/"
  [engine]="engine/"
  [conversations]="conversations/"
  [suites]="suites/"
  [bootstrap]="stats/bootstrap/_draws.py"
)
# Tests that start the package in a subprocess (test_resume.py, test_concurrent_runs.py) are
# left out: the subprocess cannot import the mutated copy, and each run takes seconds. So are
# the fault-injection runs (test_faults.py, test_ratelimit.py): every engine mutant would run
# them. test_claims.py's one child process is given the package's path, so it stays in.
declare -A TESTS=(
  [scoring]="tests/scoring/test_scoring.py tests/scoring/test_scoring_v3.py tests/scoring/test_results.py tests/suites/test_kinds.py tests/stats/test_stats.py tests/test_golden.py"
  [judging]="tests/judging/test_judge.py tests/judging/test_rubric.py tests/judging/test_checklist.py tests/judging/test_judge_form_e2e.py tests/judging/test_answer_probability.py tests/judging/test_extraction_form.py tests/judging/test_judge_injection.py tests/judging/test_question_judgment.py tests/suites/test_kinds.py tests/engine/test_engine_cache.py"
  [store]="tests/store/test_store.py tests/store/test_store_text.py tests/store/test_claims.py tests/store/test_run_status.py tests/scoring/test_results.py tests/engine/test_engine_cache.py tests/judging/test_judge.py tests/engine/test_launch.py tests/legacy/test_importer.py"
  [engine]="tests/engine/test_engine_cache.py tests/engine/test_engine_judging.py tests/engine/test_engine_turns.py tests/engine/test_engine_outcomes.py tests/engine/test_progress.py tests/engine/test_estimate.py tests/engine/test_keys.py tests/engine/test_launch.py tests/engine/test_failure_summary.py tests/store/test_claims.py tests/store/test_store_text.py tests/engine/test_cached_rerun.py tests/judging/test_judge_form_e2e.py"
  [conversations]="tests/conversations/test_conversation.py tests/engine/test_keys.py tests/engine/test_engine_turns.py tests/engine/test_engine_cache.py tests/engine/test_engine_judging.py tests/engine/test_estimate.py"
  [suites]="tests/suites/test_suite.py tests/suites/test_suite_v3.py tests/suites/test_suite_files.py tests/suites/test_selection.py tests/suites/test_kinds.py tests/cli/test_selectors.py tests/scoring/test_results.py tests/conversations/test_conversation.py tests/engine/test_keys.py"
  [bootstrap]="tests/stats/test_stats.py tests/stats/test_bootstrap_reference.py"
)
ORDER=(scoring judging store engine conversations suites bootstrap)

if [ ! -x "$PROJECT_VENV/bin/python" ]; then
  echo "no project venv at $PROJECT_VENV: run scripts/test.sh first" >&2
  exit 2
fi
if ! "$TOOL_VENV/bin/python" -c "import mutmut" 2>/dev/null; then
  python3 -m venv "$TOOL_VENV"
  "$TOOL_VENV/bin/python" -m pip install --quiet "mutmut==$MUTMUT_VERSION"
fi
# The project's dependencies (pytest, pydantic, ...) come from its own venv. A path line in a
# .pth adds that site-packages without running its own .pth files, so the editable install of
# the package is not picked up: the tests import the mutated copy.
"$PROJECT_VENV/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])" \
  >"$("$TOOL_VENV/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")/zz_project_deps.pth"

modules=("$@")
if [ ${#modules[@]} -eq 0 ]; then modules=("${ORDER[@]}"); fi
status=0
for module in "${modules[@]}"; do
  if [ -z "${SOURCES[$module]:-}" ]; then
    echo "unknown module '$module'; choose from: ${ORDER[*]}" >&2
    exit 2
  fi
  work=$ROOT/.mutation/work/$module
  rm -rf "$work"
  mkdir -p "$work"
  cp -r src tests benchmarks pyproject.toml "$work/"
  tests_toml=$(printf '"%s", ' ${TESTS[$module]})
  cat >>"$work/pyproject.toml" <<TOML

[tool.mutmut]
source_paths = ["src/independence_bench/${SOURCES[$module]}"]
also_copy = ["src/independence_bench/", "benchmarks/"]
pytest_add_cli_args_test_selection = [${tests_toml%, }]
use_git_change_detection = false
TOML
  started=$(date +%s)
  cd "$work"
  if [ "$SAMPLE" -gt 1 ]; then
    # Generate the mutants and the per-test coverage once (a pattern that matches nothing runs
    # no mutant), then run every SAMPLE-th mutant by sorted name: the same sample every time.
    "$TOOL_VENV/bin/mutmut" run --max-children "$CHILDREN" "no-such-mutant" >mutmut.log 2>&1 || true
    mapfile -t picked < <("$TOOL_VENV/bin/python" "$ROOT/scripts/mutation_summary.py" --list \
      --every "$SAMPLE")
    "$TOOL_VENV/bin/mutmut" run --max-children "$CHILDREN" "${picked[@]}" >>mutmut.log 2>&1 || true
  else
    "$TOOL_VENV/bin/mutmut" run --max-children "$CHILDREN" >mutmut.log 2>&1 || true
  fi
  elapsed=$(($(date +%s) - started))
  if ! "$TOOL_VENV/bin/python" "$ROOT/scripts/mutation_summary.py" --module "$module" \
      --threshold "$THRESHOLD" --every "$SAMPLE" --seconds "$elapsed" \
      --mutmut "$TOOL_VENV/bin/mutmut" --case-blind src/independence_bench/store/ | tee "$ROOT/.mutation/$module.txt"; then
    status=1
  fi
  cd "$ROOT"
done
exit $status
