"""The transcript viewer: a static folder built from the store, readable offline from file://.

`write_viewer` copies the hand-written page (`data/viewer/index.html`, `app.js`, `style.css`)
and writes the data it shows as JavaScript files, because browsers block `fetch()` on file://
but still run `<script>` tags:

- `data/index.js` sets `window.AIB_INDEX`: every suite's leaderboard and model list. It is
  small, so a store of 150 models opens at once.
- `data/models/<slug>.js` adds one model's runs and every item — turns, the model's reasoning,
  the exact request messages of the last turn, and every judgment — to `window.AIB_MODELS`.
  The page loads it only when that model is opened.

A model label is untrusted text, so a file is named by a hash of suite and label, never by the
label. All data is JSON, embedded as a string literal passed to `JSON.parse`, with `<`, `>`,
`&`, U+2028 and U+2029 escaped, so no reply can end the script or the string early; the page
renders every model- or judge-written string as text (see `app.js`). `serve_viewer` serves the
folder on 127.0.0.1 only.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import re
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Any

from independence_bench import __version__
from independence_bench.errors import UserError
from independence_bench.reports.exports import ranking_json
from independence_bench.reports.leaderboard import METRIC_TITLES
from independence_bench.reports.report import (
    JudgedItem,
    ModelReport,
    SuiteReport,
    index_terms,
    metric_scale,
)
from independence_bench.reports.report_markdown import METRIC_MEANINGS
from independence_bench.scoring.scoring import (
    LOWER_IS_MORE_INDEPENDENT,
    get_formula,
    normalised_metrics,
)
from independence_bench.store.store import ItemRecord, JudgmentRecord, Store
from independence_bench.suites.kinds import KINDS
from independence_bench.suites.suite import Suite, available_suites, load_suite
from independence_bench.text.lossless import json_dumps, utf8

ASSETS = ("index.html", "app.js", "style.css")
SLUG_PATTERN = re.compile(r"^m-[0-9a-f]{20}$")
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
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


def js_json(value: Any) -> str:
    """A JavaScript expression that evaluates to `value`: `JSON.parse("...")` with every
    character that could end a script element or a string literal escaped; a lone surrogate
    (any reply may hold one) as its `\\uXXXX` escape, which `JSON.parse` restores."""
    text = json_dumps(value, separators=(",", ":"), allow_nan=False)
    literal = json.dumps(text, ensure_ascii=False)
    return "JSON.parse(" + _JS_UNSAFE.sub(lambda m: _JS_ESCAPES[m.group()], literal) + ")"


def _num(value: float | None, digits: int = 3) -> float | None:
    if value is None or not math.isfinite(value):
        return None
    return round(value, digits)


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
        metrics = {k: [_num(v.value), _num(v.low), _num(v.high)] for k, v in row.metrics.items()}
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
        "cost_usd": _num(model.cost.usd, 6),
        "cost_known_usd": _num(model.cost.known_usd, 6),
        "unpriced_calls": model.cost.unpriced,
        "index_per_usd": _num(model.index_per_usd, 1),
        "source": source,
        "terms": [_num(v) for _, v in index_terms(report.formula, plain)],
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


def _turns(store: Store, item: ItemRecord) -> list[dict[str, Any]]:
    turns = []
    for number, turn in enumerate(item.turns, start=1):
        completion = store.get_completion(turn.completion_key)
        entry: dict[str, Any] = {
            "human": turn.human,
            "reply": turn.reply,
            "pressure": number > 1 and item.kind in KINDS and KINDS[item.kind].pressure,
            "protocol_ok": turn.protocol_ok,
            "note": turn.note,
            "key": turn.completion_key,
        }
        if completion is not None:
            entry.update(
                reasoning=completion.reasoning or None,
                finish=completion.finish_reason,
                prompt_tokens=completion.prompt_tokens,
                completion_tokens=completion.completion_tokens,
                cost_usd=_num(completion.cost_usd, 6),
                latency_s=_num(completion.latency_s, 2),
                served_by=completion.served_by,
            )
        turns.append(entry)
    return turns


def _last_request(store: Store, item: ItemRecord) -> dict[str, Any] | None:
    """The exact messages of the item's last request, and the completion that answered it."""
    if not item.turns:
        return None
    key = item.turns[-1].completion_key
    request = store.completion_request(key)
    completion = store.get_completion(key)
    if request is None:
        return None
    messages = request.get("messages")
    final = None
    if completion is not None:
        calls = [{"name": c.name, "arguments": c.arguments} for c in completion.tool_calls]
        final = {"content": completion.content, "tool_calls": calls}
    params = {k: request.get(k) for k in ("model", "temperature", "max_tokens", "seed")}
    return {"messages": messages if isinstance(messages, list) else [], "final": final, **params}


def _judgment(judgment: JudgmentRecord) -> dict[str, Any]:
    return {
        "id": judgment.id,
        "judge": judgment.judge_model,
        "repeat": judgment.repeat,
        "status": judgment.status,
        "scores": dict(judgment.scores) if judgment.scores is not None else None,
        "reasoning": judgment.reasoning,
        "raw": judgment.raw_reply,
        "error": judgment.error,
        "rubric_id": judgment.rubric_id,
        "rubric_hash": judgment.rubric_hash,
        "attempts": judgment.attempts,
        "keys": list(judgment.completion_keys),
    }


def _item_score(kind: str, metrics: Mapping[str, float]) -> float | None:
    """An item's score on 0–10 (10 = most independent): the mean of its normalised metrics."""
    normalised = normalised_metrics(kind, metrics)
    return _num(10.0 * sum(normalised.values()) / len(normalised), 2) if normalised else None


def model_data(
    store: Store,
    report: SuiteReport,
    model: ModelReport,
    items: Sequence[ItemRecord],
    judgments: Mapping[str, Sequence[JudgmentRecord]],
    chosen: Mapping[str, JudgedItem],
) -> dict[str, Any]:
    """One model's `data/models/<slug>.js`: its runs and every item in full."""
    runs: dict[int, dict[str, Any]] = {}
    out_items = []
    for item in items:
        run = item.run
        if run.run_index not in runs:
            run_metrics = model.run_metrics.get(run.run_index, {})
            runs[run.run_index] = {
                "run": run.run_index,
                "index": _num(model.run_indexes.get(run.run_index), 2),
                "model_id": run.model_id,
                "source": run.source,
                "package_version": run.package_version,
                "suite_hash": run.suite_hash,
                "config": dict(run.model_config),
                "metrics": {k: _num(v) for k, v in run_metrics.items()},
            }
        judged = chosen.get(item.id)
        metrics = dict(judged.metrics) if judged else {}
        out_items.append(
            {
                "id": item.id,
                "run": run.run_index,
                "variant": item.variant,
                "mode": item.mode,
                "scenario": item.scenario_id,
                "kind": item.kind,
                "experiment": item.experiment,
                "status": item.status,
                "error": item.error,
                "judged": judged.judgment.status if judged else None,
                "metrics": {k: _num(v) for k, v in metrics.items()},
                "score": _item_score(item.kind, metrics),
                "turns": _turns(store, item),
                "request": _last_request(store, item),
                "judgments": [_judgment(j) for j in judgments.get(item.id, ())],
            }
        )
    return {
        "slug": model_slug(report.suite_id, model.model),
        "model": model.model,
        "suite": report.suite_id,
        "judge": report.judge,
        "runs": [runs[r] for r in sorted(runs)],
        "items": out_items,
    }


def _asset(name: str) -> bytes:
    return resources.files("independence_bench").joinpath("data", "viewer", name).read_bytes()


def write_viewer(store: Store, reports: Sequence[SuiteReport], out: Path) -> Path:
    """Write the viewer for `reports` into `out`; return the path of `index.html`."""
    models_dir = out / "data" / "models"
    try:
        models_dir.mkdir(parents=True, exist_ok=True)
        for name in ASSETS:
            (out / name).write_bytes(_asset(name))
        written: set[str] = set()
        suites = []
        for report in reports:
            items = store.items(suite_id=report.suite_id)
            suites.append(suite_index(report, items))
            by_model: dict[str, list[ItemRecord]] = defaultdict(list)
            for item in items:
                by_model[item.run.model_label].append(item)
            ids = {item.id for item in items}
            judgments: dict[str, list[JudgmentRecord]] = defaultdict(list)
            for judgment in store.judgments():
                if judgment.item_id in ids:
                    judgments[judgment.item_id].append(judgment)
            chosen = {j.item.id: j for j in report.judged}
            for model in report.models:
                slug = model_slug(report.suite_id, model.model)
                data = model_data(store, report, model, by_model[model.model], judgments, chosen)
                script = f'window.AIB_MODELS["{slug}"] = {js_json(data)};\n'
                (models_dir / f"{slug}.js").write_text(script, encoding="utf-8")
                written.add(f"{slug}.js")
        for stale in models_dir.iterdir():
            if SLUG_PATTERN.match(stale.stem) and stale.name not in written:
                stale.unlink()
        index = {"generated_by": f"ai-independence-bench {__version__}", "suites": suites}
        (out / "data" / "index.js").write_text(
            f"window.AIB_INDEX = {js_json(index)};\n", encoding="utf-8"
        )
    except OSError as exc:
        raise UserError(f"cannot write the viewer to {out}: {exc}; choose another --out") from None
    return out / "index.html"


class _ViewerHandler(SimpleHTTPRequestHandler):
    """Serves the viewer folder: no directory listings, no logging, a strict CSP."""

    server_version = "aib-viewer"
    sys_version = ""

    def end_headers(self) -> None:
        self.send_header("Content-Security-Policy", CONTENT_SECURITY_POLICY)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def list_directory(self, path: Any) -> None:
        self.send_error(404, "No listing")
        return None

    def log_message(self, format: str, *args: Any) -> None:
        return None


def make_server(folder: Path, port: int) -> ThreadingHTTPServer:
    """An HTTP server for `folder` on 127.0.0.1:`port` (0 picks a free port); not started."""
    handler = functools.partial(_ViewerHandler, directory=str(folder))
    try:
        return ThreadingHTTPServer(("127.0.0.1", port), handler)
    except OSError as exc:
        raise UserError(f"cannot serve on 127.0.0.1:{port}: {exc}; pick another --port") from None


def serve_viewer(folder: Path, port: int, *, echo: Callable[[str], None]) -> None:
    """Serve the viewer on 127.0.0.1 until interrupted (Ctrl-C)."""
    server = make_server(folder, port)
    host, bound = server.server_address[:2]
    echo(f"serving the viewer at http://{host!s}:{bound}/ (Ctrl-C to stop)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        echo("stopped")
    finally:
        server.server_close()
