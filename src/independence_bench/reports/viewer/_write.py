"""The transcript viewer: a static folder built from the store, readable offline from file://.

`write_viewer` writes what `gathering.transcripts` reads one model at a time (its memory is that
of the largest model, not of the store), copies the hand-written page
(`data/viewer/index.html`, `app.js`, `style.css`) and writes the data it shows as JavaScript
files, because browsers block `fetch()` on file:// but still run `<script>` tags:

- `data/index.js` sets `window.AIB_INDEX`: every suite's leaderboard and model list. It is
  small, so a store of 150 models opens at once.
- `data/models/<slug>.js` adds one model's runs and every item — turns, the model's reasoning,
  the exact request messages of the last turn, and every judgment — to `window.AIB_MODELS`,
  packed so that each text is written once (`_model.py`). The page loads it only when
  that model is opened, and unpacks it then.
- `data/shared.js` sets `window.AIB_SHARED`: the texts and request messages that more than
  one model uses (the suite's prompts and turns), which the model files refer to; written
  last, as models are written one at a time (`_tables.py`).

A model label is untrusted text, so a file is named by a hash of suite and label, never by the
label. All data is JSON, embedded as a string literal passed to `JSON.parse`, with `<`, `>`,
`&`, U+2028 and U+2029 escaped, so no reply can end the script or the string early; the page
renders every model- or judge-written string as text (see `app.js`).

Every observable state of the folder is whole, even if the process is stopped midway (a
SIGTERM used to leave an `index.html` with no data): the data are written into a staging
folder (`.data-staging-<pid>`, which the server never serves), which replaces `data/` in two
renames with the stop signals held back between them; the page's own files come after, and
`index.html` last, so a page never exists without its data.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import signal
from collections.abc import Callable, Iterable, Iterator, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from independence_bench.engine.stopping import STOP_SIGNALS
from independence_bench.errors import UserError
from independence_bench.gathering.suite_report import (
    ModelReport,
    SuiteReport,
    index_terms,
    metric_scale,
)
from independence_bench.gathering.transcripts import ItemRecord, SuiteTranscripts
from independence_bench.reports.exports import ranking_json
from independence_bench.reports.format import METRIC_MEANINGS, rounded
from independence_bench.reports.leaderboard import METRIC_TITLES
from independence_bench.reports.viewer._model import model_data
from independence_bench.reports.viewer._tables import Numbering, SharedTables
from independence_bench.scoring.scoring import LOWER_IS_MORE_INDEPENDENT, get_formula
from independence_bench.suites.suite import Suite, available_suites, load_suite
from independence_bench.text.lossless import finite_json, json_dumps, utf8
from independence_bench.version import __version__

ASSETS = ("index.html", "app.js", "style.css")
SLUG_PATTERN = re.compile(r"^m-[0-9a-f]{20}$")
_JS_ESCAPES = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}
_JS_UNSAFE = re.compile("[<>&\u2028\u2029]")


def model_slug(suite_id: str, label: str) -> str:
    """The file stem of a model's data: a hash of suite and label, safe as a path and a URL."""
    digest = hashlib.sha256(utf8(f"{suite_id}\0{label}")).hexdigest()
    return f"m-{digest[:20]}"


def js_json(value: Any, default: Callable[[Any], Any] | None = None) -> str:
    """A JavaScript expression that evaluates to `value`: `JSON.parse("...")` with every
    character that could end a script element or a string literal escaped; a lone surrogate
    (any reply may hold one) as its `\\uXXXX` escape, which `JSON.parse` restores. `default`
    writes what JSON cannot (the viewer's text and message references)."""
    text = json_dumps(
        finite_json(value)[0], separators=(",", ":"), allow_nan=False, default=default
    )
    literal = json.dumps(text, ensure_ascii=False)
    return "JSON.parse(" + _JS_UNSAFE.sub(lambda m: _JS_ESCAPES[m.group()], literal) + ")"


def _shipped_suite(suite_id: str, hashes: Sequence[str]) -> Suite | None:
    if suite_id not in available_suites():
        return None
    suite = load_suite(suite_id)
    return suite if suite.content_hash in hashes else None


def _scenarios(report: SuiteReport, items: Sequence[ItemRecord]) -> list[dict[str, Any]]:
    suite = _shipped_suite(report.suite_id, report.suite_hashes)
    seen: dict[str, dict[str, Any]] = {}
    for item in items:
        if item.scenario_id in seen:
            continue
        entry: dict[str, Any] = {
            "id": item.scenario_id,
            "kind": item.kind,
            "experiment": item.experiment,
            "title": item.scenario_id,
        }
        if suite is not None:
            try:
                scenario = suite.scenario(item.scenario_id)
            except KeyError:
                scenario = None
            if scenario is not None:
                entry.update(title=scenario.title, tactic=scenario.tactic, topic=scenario.topic)
        seen[item.scenario_id] = entry
    order = {sid: i for i, sid in enumerate(s.id for s in suite.scenarios)} if suite else {}
    return sorted(seen.values(), key=lambda e: (order.get(e["id"], len(order)), e["id"]))


def _model_entry(report: SuiteReport, model: ModelReport, source: str) -> dict[str, Any]:
    row = model.row
    metrics = {}
    plain = {k: v.value for k, v in row.metrics.items()} if row else {}
    if row is not None:
        metrics = {
            k: [rounded(v.value), rounded(v.low), rounded(v.high)] for k, v in row.metrics.items()
        }
    return {
        "slug": model_slug(report.suite_id, model.model),
        "model": model.model,
        **ranking_json(row),
        "runs": model.runs,
        "metrics": metrics,
        "items": model.items,
        "scored": model.scored,
        "unscored": model.unscored,
        "failed": model.failed,
        "cost_usd": rounded(model.cost.usd, 6),
        "cost_known_usd": rounded(model.cost.known_usd, 6),
        "unpriced_calls": model.cost.unpriced,
        "index_per_usd": rounded(model.index_per_usd, 1),
        "source": source,
        "terms": [rounded(v) for _, v in index_terms(report.formula, plain)],
    }


def suite_index(report: SuiteReport, items: Sequence[ItemRecord]) -> dict[str, Any]:
    """One suite's part of `window.AIB_INDEX`."""
    sources: dict[str, str] = {}
    for item in items:
        sources.setdefault(item.run.model_label, item.run.source)
    return {
        "id": report.suite_id,
        "formula": report.formula,
        "judge": report.judge,
        "standing": report.standing.as_json() if report.standing else None,
        "judge_note": report.judge_note,
        # Suite adaptive: who played the human and its standing, beside the judge's.
        "user_models": [
            s.caption(report.judge)
            for s in (report.adaptivity.standings if report.adaptivity else ())
        ],
        "method": report.leaderboard.method,
        "hashes": list(report.suite_hashes),
        "terms": [
            {"label": t.label, "weight": t.weight} for t in get_formula(report.formula).terms
        ],
        "metrics": [
            {
                "key": key,
                "title": METRIC_TITLES.get(key, key),
                "scale": metric_scale(report.formula, key),
                "lower_better": key in LOWER_IS_MORE_INDEPENDENT,
                "meaning": METRIC_MEANINGS.get(key, ""),
            }
            for key in report.metric_keys
        ],
        "scenarios": _scenarios(report, items),
        "models": [_model_entry(report, m, sources.get(m.model, "run")) for m in report.models],
    }


def _asset(name: str) -> bytes:
    return resources.files("independence_bench").joinpath("data", "viewer", name).read_bytes()


STAGING_PREFIX = ".data-staging-"


def write_viewer(suites: Iterable[SuiteTranscripts], out: Path) -> Path:
    """Write the viewer of `suites` (`gathering.transcripts.viewer_transcripts`) into `out`;
    return the path of `index.html`. The folder is whole at every moment, however the process
    is stopped (see the module docstring)."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        _remove_dead_staging(out)
        _refuse_foreign_data(out / "data")
        staging = out / f"{STAGING_PREFIX}{os.getpid()}"
        _remove(staging)
        staging.mkdir()
        _write_data(suites, staging)
        with _stop_signals_held():
            old = out / f"{STAGING_PREFIX}{os.getpid()}-old"
            data = out / "data"
            if data.exists() or data.is_symlink():
                os.replace(data, old)
            os.replace(staging, data)
        _remove(old)
        for name in (*[a for a in ASSETS if a != "index.html"], "index.html"):
            _write_atomically(out / name, _asset(name))
    except OSError as exc:
        raise UserError(f"cannot write the viewer to {out}: {exc}; choose another --out") from None
    return out / "index.html"


def _write_data(found: Iterable[SuiteTranscripts], data: Path) -> None:
    """Write `data/` (into the staging folder `data`): one file per model, the shared tables,
    and the index last."""
    models_dir = data / "models"
    models_dir.mkdir()
    suites = []
    shared = SharedTables()
    for suite in found:
        report = suite.report
        suites.append(suite_index(report, suite.items))
        chosen = {j.item.id: j for j in report.judged}
        # One model's transcripts at a time: memory stays that of the largest model.
        for transcripts in suite.models:
            slug = model_slug(report.suite_id, transcripts.model.model)
            packed = model_data(report, transcripts, slug, chosen)
            document, numbering = packed.with_tables(shared)
            script = f'window.AIB_MODELS["{slug}"] = {js_json(document, numbering)};\n'
            (models_dir / f"{slug}.js").write_text(script, encoding="utf-8")
            del transcripts, packed, document, numbering, script
    script = f"window.AIB_SHARED = {js_json(shared.document(), Numbering(shared))};\n"
    (data / "shared.js").write_text(script, encoding="utf-8")
    index = {"generated_by": f"ai-independence-bench {__version__}", "suites": suites}
    (data / "index.js").write_text(f"window.AIB_INDEX = {js_json(index)};\n", encoding="utf-8")


@contextlib.contextmanager
def _stop_signals_held() -> Iterator[None]:
    """Hold SIGINT, SIGTERM and SIGHUP back for the block (delivered at its end), so the two
    renames that swap `data/` happen both or neither. Where signals cannot be masked
    (Windows), the block runs as it is."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    earlier = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, earlier)


def _write_atomically(path: Path, data: bytes) -> None:
    """Write `path` whole or not at all: a temporary file beside it, then a rename."""
    temporary = path.with_name(f"{STAGING_PREFIX}{os.getpid()}-{path.name}")
    temporary.write_bytes(data)
    os.replace(temporary, path)


def _refuse_foreign_data(data: Path) -> None:
    """A `data` in `--out` that holds anything the viewer does not write (a project's own
    `data/` folder) is refused, never replaced."""
    if not (data.exists() or data.is_symlink()):
        return
    ours = not data.is_symlink() and data.is_dir()
    if ours:
        for entry in data.iterdir():
            if entry.name == "models" and entry.is_dir() and not entry.is_symlink():
                ours = all(_is_model_file(f) for f in entry.iterdir())
            elif entry.name not in ("index.js", "shared.js") or entry.is_symlink():
                ours = False
            if not ours:
                break
    if not ours:
        raise UserError(
            f"{data} is not a folder the viewer wrote (it holds other files); choose another "
            "--out, the viewer writes its data/ there"
        )


def _is_model_file(path: Path) -> bool:
    return path.suffix == ".js" and bool(SLUG_PATTERN.match(path.stem)) and not path.is_symlink()


def _remove(path: Path) -> None:
    """Remove a file, symbolic link or folder of ours, if it is there."""
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.exists():
        shutil.rmtree(path)


def _remove_dead_staging(out: Path) -> None:
    """Remove what an earlier `aib view` stopped midway left: staging names whose process is
    gone (a live one may be another `aib view` writing into the same folder)."""
    for leftover in out.glob(f"{STAGING_PREFIX}*"):
        pid = leftover.name[len(STAGING_PREFIX) :].partition("-")[0]
        if not pid.isdigit():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            _remove(leftover)
        except OSError:
            continue
