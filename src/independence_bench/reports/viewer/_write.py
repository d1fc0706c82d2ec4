"""The transcript viewer: a static folder built from the store, readable offline from file://.

`write_viewer` reads the store one model at a time (its memory is that of the largest model,
not of the store), copies the hand-written page (`data/viewer/index.html`, `app.js`,
`style.css`) and writes the data it shows as JavaScript files, because browsers block `fetch()`
on file:// but still run `<script>` tags:

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
renders every model- or judge-written string as text (see `app.js`). `serve_viewer` serves the
folder on 127.0.0.1 only.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Any

from independence_bench import __version__
from independence_bench.errors import UserError
from independence_bench.reports.exports import ranking_json
from independence_bench.reports.format import METRIC_MEANINGS, rounded
from independence_bench.reports.leaderboard import METRIC_TITLES
from independence_bench.reports.report import ModelReport, SuiteReport, index_terms, metric_scale
from independence_bench.reports.viewer._model import model_data
from independence_bench.reports.viewer._tables import Numbering, SharedTables
from independence_bench.scoring.scoring import LOWER_IS_MORE_INDEPENDENT, get_formula
from independence_bench.store.store import ItemRecord, JudgmentRecord, Store
from independence_bench.suites.suite import Suite, available_suites, load_suite
from independence_bench.text.lossless import finite_json, json_dumps, utf8

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


def write_viewer(store: Store, reports: Sequence[SuiteReport], out: Path) -> Path:
    """Write the viewer for `reports` into `out`; return the path of `index.html`."""
    models_dir = out / "data" / "models"
    try:
        models_dir.mkdir(parents=True, exist_ok=True)
        for name in ASSETS:
            (out / name).write_bytes(_asset(name))
        written: set[str] = set()
        suites = []
        shared = SharedTables()
        for report in reports:
            suites.append(suite_index(report, store.items(suite_id=report.suite_id, words=False)))
            chosen = {j.item.id: j for j in report.judged}
            for model in report.models:
                # One model's transcripts at a time: memory stays that of the largest model.
                items = store.items(suite_id=report.suite_id, model_label=model.model)
                judgments: dict[str, list[JudgmentRecord]] = defaultdict(list)
                for item in items:
                    judgments[item.id] = store.judgments(item_id=item.id)
                slug = model_slug(report.suite_id, model.model)
                packed = model_data(store, report, model, slug, items, judgments, chosen)
                document, numbering = packed.with_tables(shared)
                script = f'window.AIB_MODELS["{slug}"] = {js_json(document, numbering)};\n'
                (models_dir / f"{slug}.js").write_text(script, encoding="utf-8")
                written.add(f"{slug}.js")
                del items, judgments, packed, document, numbering, script
        script = f"window.AIB_SHARED = {js_json(shared.document(), Numbering(shared))};\n"
        (out / "data" / "shared.js").write_text(script, encoding="utf-8")
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

    def _host_is_ours(self) -> bool:
        """Only `Host: 127.0.0.1:<port>` or `localhost:<port>`: a page on another site whose
        name was made to resolve to 127.0.0.1 (DNS rebinding) sends its own name and is
        refused, so it cannot read the transcripts."""
        port = getattr(self.server, "server_port", 0)  # HTTPServer sets it when bound
        host = (self.headers.get("Host") or "").strip().lower()
        if host in (f"127.0.0.1:{port}", f"localhost:{port}"):
            return True
        self.send_error(421, "Misdirected Request: use http://127.0.0.1 or localhost")
        return False

    def do_GET(self) -> None:
        if self._host_is_ours():
            super().do_GET()

    def do_HEAD(self) -> None:
        if self._host_is_ours():
            super().do_HEAD()

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
