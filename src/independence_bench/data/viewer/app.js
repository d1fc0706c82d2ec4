/* AI Independence Bench results viewer.
 *
 * A hand-written single-page app with hash routing and no dependencies:
 *   #/                     leaderboard (sortable, searchable; ?suite=N picks a suite)
 *   #/model/SLUG           one model: metrics, runs, every scenario of every run
 *   #/item/SLUG/ITEM       one conversation turn by turn, with the judge's verdict
 *   #/compare?a=&b=&...    two models side by side on the same scenario
 *
 * data/index.js sets window.AIB_INDEX; data/models/SLUG.js is loaded with a <script> tag when
 * a model is first needed (fetch() does not work from file://), fills window.AIB_MODELS with
 * the packed model, and unpackModel turns that into the objects the pages read.
 *
 * Everything a model or judge wrote is untrusted: it only ever reaches the page through
 * text nodes (createTextNode / textContent). No HTML string is ever parsed, and the only
 * links are built here from hex slugs and encoded ids.
 */
"use strict";

(function () {
  const MODELS = (window.AIB_MODELS = window.AIB_MODELS || Object.create(null));
  const INDEX = window.AIB_INDEX;
  const SLUG = /^m-[0-9a-f]{20}$/;
  const app = document.getElementById("app");
  const pending = new Map();
  const loaded = new Map(); // slug -> unpacked model
  const state = { sortKey: "position", sortDir: 1, query: "" };

  // -- building DOM without HTML strings -------------------------------------------------

  function h(tag, props, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(props || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (name === "class") node.className = value;
      else if (name === "href") node.setAttribute("href", safeHref(value));
      else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
      else if (name === "width") node.style.width = value;
      else if (name === "left") node.style.left = value;
      else if (name === "value") node.value = value;
      else node.setAttribute(name, value === true ? "" : String(value));
    }
    append(node, children);
    return node;
  }

  function append(node, children) {
    for (const child of children) {
      if (child === null || child === undefined || child === false) continue;
      if (Array.isArray(child)) append(node, child);
      else if (child instanceof Node) node.appendChild(child);
      else node.appendChild(document.createTextNode(String(child)));
    }
  }

  function safeHref(route) {
    // Only routes of this page: a model's words never become a link target.
    return typeof route === "string" && route.startsWith("#/") ? route : "#/";
  }

  function text(value, className) {
    // Model or judge text: a block that keeps line breaks, filled with a text node only.
    const block = h("div", { class: "text" + (className ? " " + className : "") });
    block.textContent = value === null || value === undefined ? "" : String(value);
    return block;
  }

  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
  }

  function show(...children) {
    clear(app);
    append(app, children);
  }

  // -- formatting --------------------------------------------------------------------------

  function num(value, digits) {
    return value === null || value === undefined ? "–" : Number(value).toFixed(digits);
  }

  function countOf(n, noun) {
    // "1 model", "3 models": the rule of text/counts.py for the nouns the viewer counts.
    return n + " " + (n === 1 ? noun : noun + "s");
  }

  function interval(low, high, digits) {
    return low === null || low === undefined || high === null || high === undefined
      ? "–"
      : num(low, digits) + "–" + num(high, digits);
  }

  function usd(value) {
    if (value === null || value === undefined) return "unknown";
    return value < 1 ? "$" + value.toFixed(4) : "$" + value.toFixed(2);
  }

  function costText(row) {
    if (row.cost_usd !== null && row.cost_usd !== undefined) return usd(row.cost_usd);
    return row.cost_known_usd ? "unknown (≥ " + usd(row.cost_known_usd) + ")" : "unknown";
  }

  function scoreClass(score) {
    if (score === null || score === undefined) return "score none";
    return "score s" + Math.min(4, Math.floor(score / 2.0001));
  }

  function pretty(value) {
    return JSON.stringify(value, null, 2);
  }

  // -- data --------------------------------------------------------------------------------

  const entries = new Map(); // slug -> { suite, row, position }
  if (INDEX && Array.isArray(INDEX.suites)) {
    INDEX.suites.forEach((suite, suiteNumber) => {
      suite.models.forEach((row, position) => {
        if (SLUG.test(row.slug)) entries.set(row.slug, { suite, suiteNumber, row, position });
      });
    });
  }

  // A model file is packed (see reports/viewer_model.py): each text once per file, and in
  // data/shared.js once for all when several models use it; each request message the same way;
  // records as lists in the order `fields` names. A number n >= 0 is the file's own table at n,
  // a negative one the shared table at -1 - n. This turns the file back into the objects the
  // pages read; texts stay strings, shown as text nodes.
  function unpackModel(data) {
    const shared = window.AIB_SHARED || { texts: [], messages: [] };
    function pick(table, n) {
      const [own, index] = n >= 0 ? [data[table], n] : [shared[table], -1 - n];
      if (!Number.isInteger(n) || index >= own.length) throw new Error("data/shared.js does not match this model file");
      return own[index];
    }
    const textual = new Set(data.text_fields);
    function record(kind, row, into) {
      const out = into || {};
      data.fields[kind].forEach((name, n) => {
        out[name] = textual.has(name) && row[n] !== null ? pick("texts", row[n]) : row[n];
      });
      return out;
    }
    function message(n) {
      const [content, found] = pick("messages", n);
      if (content === null || !found || typeof found !== "object") return found;
      const copy = Object.create(null);
      for (const key of Object.keys(found)) copy[key] = found[key];
      copy.content = pick("texts", content);
      return copy;
    }
    function turn(row) {
      const found = record("turn", row);
      const stored = found.completion;
      delete found.completion;
      return stored ? record("completion", stored, found) : found;
    }
    function request(row) {
      if (!row) return null;
      const found = record("request", row);
      found.messages = found.messages.map(message);
      if (found.final) {
        found.final = record("final", found.final);
        found.final.tool_calls = found.final.tool_calls.map((call) => record("call", call));
      }
      return found;
    }
    const items = data.items.map((row) => {
      const item = record("item", row);
      item.turns = item.turns.map(turn);
      item.request = request(item.request);
      item.judgments = item.judgments.map((j) => record("judgment", j));
      return item;
    });
    return { slug: data.slug, model: data.model, suite: data.suite, judge: data.judge, runs: data.runs, items };
  }

  function loadModel(slug) {
    if (!SLUG.test(slug) || !entries.has(slug)) return Promise.reject(new Error("unknown model"));
    if (loaded.has(slug)) return Promise.resolve(loaded.get(slug));
    if (pending.has(slug)) return pending.get(slug);
    const promise = new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.src = "data/models/" + slug + ".js";
      script.onload = () => {
        if (!MODELS[slug]) return reject(new Error(script.src + " held no data"));
        try {
          loaded.set(slug, unpackModel(MODELS[slug]));
        } catch (_) {
          pending.delete(slug);
          return reject(new Error(script.src + " is not a model file of this viewer: run 'aib view' again"));
        }
        resolve(loaded.get(slug));
      };
      script.onerror = () => {
        pending.delete(slug);
        script.remove();
        reject(new Error("could not load " + script.src));
      };
      document.head.appendChild(script);
    });
    pending.set(slug, promise);
    return promise;
  }

  function scenarioOf(suite, id) {
    return suite.scenarios.find((s) => s.id === id) || { id, title: id, kind: "", experiment: "" };
  }

  function unitKey(item) {
    return [item.variant, item.mode, item.scenario].join("\u001f");
  }

  function multiCell(suite, model) {
    const cells = new Set(model.items.map((i) => i.variant + "/" + i.mode));
    return cells.size > 1;
  }

  // -- routing -----------------------------------------------------------------------------

  function decode(part) {
    try {
      return decodeURIComponent(part);
    } catch (_) {
      return "";
    }
  }

  function route() {
    const raw = location.hash.replace(/^#/, "") || "/";
    const [path, query] = raw.split("?", 2);
    return { parts: path.split("/").filter(Boolean).map(decode), params: new URLSearchParams(query || "") };
  }

  function modelHref(slug) {
    return "#/model/" + slug;
  }

  function itemHref(slug, itemId) {
    return "#/item/" + slug + "/" + encodeURIComponent(itemId);
  }

  function compareHref(params) {
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries(params)) {
      if (value !== null && value !== undefined && value !== "") query.set(key, String(value));
    }
    return "#/compare?" + query.toString();
  }

  function render() {
    const { parts, params } = route();
    if (!INDEX || !Array.isArray(INDEX.suites)) {
      show(h("p", { class: "error" }, "data/index.js is missing or empty: run 'aib view' again."));
      return;
    }
    window.scrollTo(0, 0);
    if (parts.length === 0) renderLeaderboard(params);
    else if (parts[0] === "model" && parts.length === 2) withModel(parts[1], renderModel);
    else if (parts[0] === "item" && parts.length === 3) withModel(parts[1], (m) => renderItem(m, parts[2]));
    else if (parts[0] === "compare") renderCompare(params);
    else show(h("p", { class: "error" }, "No such page."), h("a", { href: "#/" }, "Back to the leaderboard"));
  }

  function withModel(slug, draw) {
    const entry = entries.get(slug);
    if (!entry) {
      show(h("p", { class: "error" }, "No such model in this viewer."), h("a", { href: "#/" }, "Back to the leaderboard"));
      return;
    }
    show(h("p", { class: "loading" }, "Loading " + entry.row.model + "…"));
    const expected = location.hash;
    loadModel(slug).then(
      (model) => {
        if (location.hash === expected) draw(model);
      },
      (error) => show(h("p", { class: "error" }, error.message))
    );
  }

  function crumbs(...links) {
    const nav = h("nav", { class: "crumbs", "aria-label": "Breadcrumb" });
    links.forEach((link, i) => {
      if (i) append(nav, [" › "]);
      append(nav, [link]);
    });
    return nav;
  }

  // -- leaderboard -------------------------------------------------------------------------

  const COLUMNS = [
    { key: "position", title: "Rank", value: (r, p) => p },
    { key: "model", title: "Model", value: (r) => r.model.toLowerCase() },
    { key: "index", title: "Index", value: (r) => r.index },
    { key: "interval", title: "95% interval", value: (r) => (r.ci_high === null ? null : r.ci_high - r.ci_low) },
    { key: "runs", title: "Runs", value: (r) => r.runs },
  ];

  function columnsOf(suite) {
    const metricColumns = suite.metrics.map((m) => ({
      key: "metric:" + m.key,
      title: m.title,
      hint: m.key + " (0–" + m.scale + ", " + (m.lower_better ? "lower" : "higher") + " = more independent)",
      value: (r) => (r.metrics[m.key] ? r.metrics[m.key][0] : null),
      metric: m,
    }));
    return COLUMNS.concat(metricColumns, [
      { key: "scored", title: "Scored", value: (r) => r.scored },
      { key: "cost", title: "Cost", value: (r) => r.cost_usd },
      { key: "per_usd", title: "Index per $", value: (r) => r.index_per_usd },
    ]);
  }

  function sortedRows(suite, columns) {
    const column = columns.find((c) => c.key === state.sortKey) || columns[0];
    const query = state.query.trim().toLowerCase();
    const rows = suite.models
      .map((row, position) => ({ row, position: position + 1 }))
      .filter(({ row }) => !query || row.model.toLowerCase().includes(query));
    rows.sort((a, b) => {
      const x = column.value(a.row, a.position);
      const y = column.value(b.row, b.position);
      if (x === y) return a.position - b.position;
      if (x === null || x === undefined) return 1;
      if (y === null || y === undefined) return -1;
      return (x < y ? -1 : 1) * state.sortDir;
    });
    return rows;
  }

  function indexBar(row) {
    if (row.index === null) return null;
    const bar = h("span", { class: "bar", "aria-hidden": "true" }, h("span", { class: "fill", width: row.index + "%" }));
    if (row.ci_low !== null && row.ci_high !== null) {
      append(bar, [h("span", { class: "ci", left: row.ci_low + "%", width: Math.max(0.5, row.ci_high - row.ci_low) + "%" })]);
    }
    return bar;
  }

  function rankText(row) {
    if (row.rank === null) return "–";
    if (row.rank_low === null || row.rank_high === null) return String(row.rank) + "*";
    return row.rank + " (" + row.rank_low + "–" + row.rank_high + ")";
  }

  function leaderboardRow(suite, columns, row, position) {
    const cells = columns.map((column) => {
      switch (column.key) {
        case "position":
          return h("td", { class: "rank" }, rankText(row));
        case "model":
          return h("td", { class: "model" }, h("a", { href: modelHref(row.slug) }, row.model),
            row.source === "import" ? h("span", { class: "badge" }, "imported") : null);
        case "index":
          return h("td", { class: "num" }, row.index === null ? "incomplete" : num(row.index, 1), indexBar(row));
        case "interval":
          return h("td", { class: "num", title: row.why_no_interval || "" }, interval(row.ci_low, row.ci_high, 1));
        case "runs":
          return h("td", { class: "num" }, String(row.runs));
        case "scored":
          return h("td", { class: "num" }, row.scored + "/" + row.items);
        case "cost":
          return h("td", { class: "num" }, costText(row));
        case "per_usd":
          return h("td", { class: "num" }, num(row.index_per_usd, 0));
        default:
          return h("td", { class: "num" }, num(column.value(row), 2));
      }
    });
    return h("tr", {}, cells);
  }

  function renderLeaderboard(params) {
    const suiteNumber = Math.max(0, Math.min(INDEX.suites.length - 1, parseInt(params.get("suite") || "0", 10) || 0));
    const suite = INDEX.suites[suiteNumber];
    const columns = columnsOf(suite);
    const body = h("tbody");
    const count = h("span", { class: "count" });
    function fill() {
      clear(body);
      const rows = sortedRows(suite, columns);
      rows.forEach(({ row, position }) => body.appendChild(leaderboardRow(suite, columns, row, position)));
      count.textContent = rows.length + " of " + countOf(suite.models.length, "model");
    }
    const head = h("tr", {}, columns.map((column) => {
      const sorted = state.sortKey === column.key;
      const button = h("button", {
        type: "button",
        class: "sort",
        title: column.hint || "Sort by " + column.title,
        onclick: () => {
          state.sortDir = state.sortKey === column.key ? -state.sortDir : column.key === "model" || column.key === "position" ? 1 : -1;
          state.sortKey = column.key;
          renderLeaderboard(params);
        },
      }, column.title, sorted ? (state.sortDir > 0 ? " ▲" : " ▼") : "");
      return h("th", { scope: "col", "aria-sort": sorted ? (state.sortDir > 0 ? "ascending" : "descending") : "none" }, button);
    }));
    const search = h("input", {
      type: "search",
      id: "search",
      placeholder: "Search models",
      "aria-label": "Search models",
      value: state.query,
      oninput: (event) => {
        state.query = event.target.value;
        fill();
      },
    });
    const tabs = INDEX.suites.length > 1
      ? h("nav", { class: "tabs", "aria-label": "Suites" }, INDEX.suites.map((s, n) =>
          h("a", { href: "#/?suite=" + n, class: n === suiteNumber ? "active" : "" }, "Suite " + s.id)))
      : null;
    fill();
    show(
      h("h1", {}, "Leaderboard"),
      tabs,
      h("p", { class: "meta" }, "Suite ", h("code", {}, suite.id), " · judge ", h("code", {}, suite.judge || "none"),
        " · formula ", h("code", {}, suite.formula), " · ", countOf(suite.models.length, "model")),
      standingNote(suite),
      h("div", { class: "tools" }, search, count),
      h("div", { class: "scroll" }, h("table", { class: "board" }, h("thead", {}, head), body)),
      legend(suite)
    );
    const input = document.getElementById("search");
    if (state.query && input) {
      input.focus();
      input.setSelectionRange(state.query.length, state.query.length);
    }
  }

  function legend(suite) {
    const terms = suite.terms.map((t) => Math.round(t.weight * 100) + "% " + t.label).join(", ");
    return h("details", { class: "legend" }, h("summary", {}, "How to read the scores"),
      h("ul", {},
        h("li", {}, "Index (0–100) = " + terms + "; each term scaled to 0–1, 1 = most independent."),
        suite.metrics.map((m) => h("li", {}, m.title + " (" + m.key + ", 0–" + m.scale + ", " +
          (m.lower_better ? "lower" : "higher") + " = more independent): " + m.meaning + ".")),
        h("li", {}, "95% interval: " + suite.method + ". One run gives no interval."),
        h("li", {}, "Rank: the model's place by index and, in brackets, its own 95% rank interval from the same resamples, e.g. 3 (2–6). " +
          "A model whose interval includes 1 cannot be told apart from the leader (" + suite.models.filter((r) => r.could_lead).length +
          " here); each interval is the model's own, never merged with its neighbours'. * = no rank interval."),
        h("li", {}, "Cost: stored cost of every call the model answered, over all runs; unknown when any call had none.")));
  }

  // -- model page --------------------------------------------------------------------------

  function renderModel(model) {
    const entry = entries.get(model.slug);
    const { suite, row } = entry;
    const stats = h("dl", { class: "stats" },
      h("div", {}, h("dt", {}, "Index"), h("dd", {}, row.index === null ? "incomplete" : num(row.index, 1))),
      h("div", {}, h("dt", {}, "95% interval"), h("dd", { title: row.why_no_interval || "" }, interval(row.ci_low, row.ci_high, 1))),
      h("div", {}, h("dt", {}, "Rank"), h("dd", { title: row.rank_low ? "95% rank interval " + row.rank_low + "–" + row.rank_high : "no rank interval" }, rankText(row))),
      h("div", {}, h("dt", {}, "Runs"), h("dd", {}, String(row.runs))),
      h("div", {}, h("dt", {}, "Items scored"), h("dd", {}, row.scored + "/" + row.items)),
      h("div", {}, h("dt", {}, "Cost"), h("dd", {}, costText(row))));
    const metrics = h("table", { class: "metrics" },
      h("thead", {}, h("tr", {}, ["Metric", "Mean", "95% interval", "Scale", "Meaning"].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, suite.metrics.map((m) => {
        const v = row.metrics[m.key] || [null, null, null];
        return h("tr", {}, h("td", {}, m.title), h("td", { class: "num" }, num(v[0], 2)),
          h("td", { class: "num" }, interval(v[1], v[2], 2)),
          h("td", {}, "0–" + m.scale + (m.lower_better ? ", lower = better" : "")), h("td", {}, m.meaning));
      })));
    const runs = h("table", { class: "runs" },
      h("thead", {}, h("tr", {}, ["Run", "Index"].concat(suite.metrics.map((m) => m.title), ["Model id", "Source", "Config"])
        .map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, model.runs.map((run) => h("tr", {},
        h("td", {}, String(run.run)), h("td", { class: "num" }, num(run.index, 1)),
        suite.metrics.map((m) => h("td", { class: "num" }, num(run.metrics[m.key], 2))),
        h("td", {}, run.model_id), h("td", {}, run.source + " · v" + run.package_version),
        h("td", {}, h("details", {}, h("summary", {}, "config"), text(pretty(run.config), "code")))))));
    const others = suite.models.filter((r) => r.slug !== model.slug);
    const picker = h("select", { id: "compare-with", "aria-label": "Compare with" },
      others.map((r) => h("option", { value: r.slug }, r.model)));
    const compare = others.length
      ? h("div", { class: "tools" }, h("label", { for: "compare-with" }, "Compare with "), picker,
          h("button", { type: "button", onclick: () => { location.hash = compareHref({ a: model.slug, b: picker.value }); } }, "Compare"))
      : null;
    show(
      crumbs(h("a", { href: "#/?suite=" + entry.suiteNumber }, "Leaderboard"), h("span", {}, model.model)),
      h("h1", {}, model.model),
      h("p", { class: "meta" }, "Suite ", h("code", {}, suite.id), " · judge ", h("code", {}, suite.judge || "none"),
        row.missing.length ? " · missing: " + row.missing.join(", ") : ""),
      standingNote(suite),
      row.why_no_interval ? h("p", { class: "note" }, "No interval: " + row.why_no_interval + ".") : null,
      stats,
      compare,
      h("h2", {}, "Metrics"), h("div", { class: "scroll" }, metrics),
      h("h2", {}, "Runs"), h("div", { class: "scroll" }, runs),
      h("h2", {}, "Scenarios"),
      h("p", { class: "meta" }, "Each cell is one conversation: its score on 0–10 (10 = most independent) from the judge. Open a cell to read it."),
      scenarioTables(suite, model)
    );
  }

  function scenarioTables(suite, model) {
    const runNumbers = model.runs.map((r) => r.run);
    const showCell = multiCell(suite, model);
    const groups = new Map();
    for (const item of model.items) {
      const key = unitKey(item);
      if (!groups.has(item.experiment)) groups.set(item.experiment, new Map());
      const units = groups.get(item.experiment);
      if (!units.has(key)) units.set(key, { item, byRun: new Map() });
      units.get(key).byRun.set(item.run, item);
    }
    const out = [];
    for (const [experiment, units] of groups) {
      const head = ["Scenario"].concat(showCell ? ["Prompt", "Delivery"] : [], runNumbers.map((r) => "Run " + r));
      out.push(h("h3", {}, experiment));
      out.push(h("div", { class: "scroll" }, h("table", { class: "scenarios" },
        h("thead", {}, h("tr", {}, head.map((t) => h("th", { scope: "col" }, t)))),
        h("tbody", {}, Array.from(units.values()).map(({ item, byRun }) => {
          const scenario = scenarioOf(suite, item.scenario);
          return h("tr", {},
            h("td", {}, h("span", { class: "title" }, scenario.title), h("span", { class: "sub" }, item.kind)),
            showCell ? [h("td", {}, item.variant), h("td", {}, item.mode)] : null,
            runNumbers.map((run) => {
              const found = byRun.get(run);
              if (!found) return h("td", { class: "score none" }, "–");
              const label = found.status === "failed" ? "failed" : found.score !== null ? num(found.score, 1) : found.judged || "not judged";
              return h("td", { class: scoreClass(found.status === "failed" ? null : found.score) },
                h("a", { href: itemHref(model.slug, found.id), title: "Run " + run + ": open the conversation" }, label));
            }));
        })))));
    }
    return out;
  }

  // -- trajectory page ---------------------------------------------------------------------

  function findItem(model, itemId) {
    return model.items.find((i) => i.id === itemId) || null;
  }

  // Escalation items: the round (1-5, Turn round+1) in which the chosen judge says the model
  // first gave up its opening position; 0 = never. null when the item has no such judgment.
  function flipRound(item, judge) {
    const chosen = item.judgments.find((j) => j.judge === judge && !j.repeat && j.status === "scored" && j.scores);
    const round = chosen ? chosen.scores.first_yield_round : undefined;
    return typeof round === "number" ? { round: round, returned: chosen.scores.returned_after_yield === true } : null;
  }

  function flipSummary(flip) {
    if (!flip) return null;
    if (flip.round === 0) return h("p", { class: "meta" }, h("span", { class: "badge ok" }, "held all rounds"), " · the judge found no round in which the model gave up its opening position");
    return h("p", { class: "meta" }, h("span", { class: "badge warn" }, "gave way in round " + flip.round),
      " (turn " + (flip.round + 1) + ")", flip.returned ? " · came back to its position later" : " · did not come back to it");
  }

  function conversation(item, flip) {
    const turns = item.turns.map((turn, n) => {
      const place = "turn " + (n + 1) + "/" + item.turns.length;
      const written = turn.written_by
        ? h("span", { class: "badge generated", title: "written by the user model " + turn.written_by }, "generated " + place + " by user model " + turn.written_by)
        : h("span", { class: "badge scripted" }, "scripted " + place);
      const humanHead = h("div", { class: "who" }, "Human", written,
        turn.pressure ? h("span", { class: "badge pressure" }, "pressure") : null);
      const modelHead = h("div", { class: "who" }, "Model",
        turn.protocol_ok === false ? h("span", { class: "badge warn" }, "protocol deviation") : null,
        turn.answered_by ? h("span", { class: "badge warn" }, "answered by " + turn.answered_by + ", not the model asked") : null,
        flip && flip.round > 0 && n === flip.round ? h("span", { class: "badge warn flip" }, "gave way here (round " + flip.round + ")") : null);
      const meta = [turn.finish ? "finish: " + turn.finish + (turn.native_finish ? " (provider: " + turn.native_finish + ")" : "") : null,
        turn.completion_tokens !== undefined && turn.completion_tokens !== null ? turn.prompt_tokens + " → " + turn.completion_tokens + " tokens" : null,
        turn.cost_usd !== undefined ? "cost " + usd(turn.cost_usd) : null,
        turn.latency_s ? turn.latency_s + " s" : null,
        turn.reasoning_tokens ? turn.reasoning_tokens + " reasoning tokens" : null,
        turn.cached_tokens ? turn.cached_tokens + " prompt tokens from the cache" : null,
        turn.served_by ? "served by " + turn.served_by : null,
        turn.generation ? "generation " + turn.generation : null].filter(Boolean).join(" · ");
      return h("li", { class: "turn" },
        h("div", { class: "msg human" }, humanHead, text(turn.human)),
        h("div", { class: "msg model" }, modelHead,
          turn.reasoning ? h("details", { class: "reasoning" }, h("summary", {}, "Reasoning (" + turn.reasoning.length + " characters)"), text(turn.reasoning)) : null,
          text(turn.reply, "reply"),
          turn.note ? h("p", { class: "note" }, turn.note) : null,
          h("p", { class: "meta small" }, meta, meta ? " · " : "", "completion ", h("code", { title: turn.key }, String(turn.key).slice(0, 12)))));
    });
    return h("ol", { class: "conversation" }, turns);
  }

  function toolCallText(call) {
    const fn = call.function || call;
    const args = fn.arguments;
    try {
      const parsed = JSON.parse(args);
      if (parsed && typeof parsed.message === "string") return parsed.message;
    } catch (_) {
      /* arguments that are not JSON are shown raw below */
    }
    return typeof args === "string" ? args : pretty(args);
  }

  function messageContent(content) {
    if (typeof content === "string") return content;
    if (Array.isArray(content)) return content.map((p) => (p && typeof p.text === "string" ? p.text : pretty(p))).join("\n");
    return content === null || content === undefined ? "" : pretty(content);
  }

  function exactMessages(item, source) {
    const request = item.request;
    if (!request) return null;
    const list = request.messages.map((message, n) => {
      const role = String(message.role || "?");
      const calls = Array.isArray(message.tool_calls) ? message.tool_calls : [];
      const label = role === "tool" ? "tool result (the human's words)" : role;
      const body = [];
      const content = messageContent(message.content);
      if (role === "system") body.push(h("details", {}, h("summary", {}, "system prompt (" + content.length + " characters)"), text(content)));
      else if (content) body.push(text(content));
      for (const call of calls) {
        const fn = call.function || {};
        body.push(h("div", { class: "call" }, h("span", { class: "badge" }, "calls " + String(fn.name || "?")), text(toolCallText(call))));
      }
      return h("li", { class: "wire " + role.replace(/[^a-z]/g, "") }, h("div", { class: "who" }, label, h("span", { class: "sub" }, "#" + (n + 1))), body);
    });
    const final = request.final;
    if (final) {
      const body = [];
      if (final.content) body.push(text(final.content));
      for (const call of final.tool_calls || []) {
        body.push(h("div", { class: "call" }, h("span", { class: "badge" }, "calls " + String(call.name)), text(toolCallText(call))));
      }
      list.push(h("li", { class: "wire assistant final" }, h("div", { class: "who" }, "assistant (the reply)"), body));
    }
    return h("details", { class: "wire-log", open: source === "import" },
      h("summary", {}, "Exact messages of the last request (" + request.messages.length + " messages, as sent to " + String(request.model || "the model") + ")"),
      h("ol", { class: "wire-list" }, list));
  }

  // The judge's standing (calibrated, smoke test or not calibrated), under every page's
  // numbers; the caption is judge-named text, so it goes in as a text node.
  function standingNote(suite) {
    if (!suite.standing) return null;
    const users = (suite.user_models || []).flatMap((caption) => [h("br", {}), caption]);
    return h("p", { class: "note standing" }, suite.standing.caption,
      suite.judge_note ? h("br", {}) : null, suite.judge_note || null, ...users);
  }

  function judgePanel(item, judge) {
    if (!item.judgments.length) return h("aside", { class: "judge" }, h("h2", {}, "Judge"), h("p", {}, "Not judged."));
    const cards = item.judgments.map((j) => {
      const scores = j.scores ? Object.keys(j.scores).map((key) =>
        h("tr", {}, h("th", { scope: "row" }, key), h("td", {}, typeof j.scores[key] === "string" ? j.scores[key] : JSON.stringify(j.scores[key])))) : [];
      return h("section", { class: "verdict" + (j.judge === judge ? " chosen" : "") },
        h("h3", {}, j.judge, j.repeat ? " (repeat " + j.repeat + ")" : "",
          h("span", { class: "badge " + (j.status === "scored" ? "ok" : "warn") }, j.status)),
        scores.length ? h("table", { class: "scores" }, h("tbody", {}, scores)) : null,
        j.reasoning ? [h("h4", {}, "Reasoning"), text(j.reasoning)] : null,
        j.error ? h("p", { class: "error" }, j.error) : null,
        j.raw ? h("details", {}, h("summary", {}, "Raw reply"), text(j.raw, "code")) : null,
        h("p", { class: "meta small" }, "rubric " + j.rubric_id + " · " + String(j.rubric_hash).slice(0, 12) + " · " + countOf(j.attempts, "attempt") + " · judgment #" + j.id));
    });
    return h("aside", { class: "judge" }, h("h2", {}, "Judge"), cards);
  }

  function renderItem(model, itemId) {
    const entry = entries.get(model.slug);
    const item = findItem(model, itemId);
    if (!item) {
      show(h("p", { class: "error" }, "No such conversation for this model."), h("a", { href: modelHref(model.slug) }, "Back to the model"));
      return;
    }
    const scenario = scenarioOf(entry.suite, item.scenario);
    const run = model.runs.find((r) => r.run === item.run) || {};
    const siblings = model.items.filter((i) => unitKey(i) === unitKey(item));
    const flip = flipRound(item, entry.suite.judge);
    show(
      crumbs(h("a", { href: "#/?suite=" + entry.suiteNumber }, "Leaderboard"), h("a", { href: modelHref(model.slug) }, model.model),
        h("span", {}, scenario.title + " · run " + item.run)),
      h("h1", {}, scenario.title),
      h("p", { class: "meta" }, model.model, " · ", item.kind === item.experiment ? item.kind : item.kind + " (" + item.experiment + ")",
        " · ", item.variant, " · ", item.mode,
        " · run " + item.run, " · ", h("span", { class: "badge" + (item.status === "done" ? "" : " warn") }, item.status),
        item.score !== null ? h("span", { class: scoreClass(item.score) + " pill" }, "score " + num(item.score, 1) + "/10") : null),
      h("p", { class: "meta small" }, "item ", h("code", {}, item.id), run.source === "import" ? " · imported" : ""),
      h("nav", { class: "tools" }, "Runs: ", siblings.map((s) => s.id === item.id ? h("strong", {}, String(s.run)) : h("a", { href: itemHref(model.slug, s.id) }, String(s.run))),
        " · ", h("a", { href: compareHref({ a: model.slug, v: item.variant, m: item.mode, s: item.scenario, ra: item.run }) }, "Compare this scenario with another model")),
      item.error ? h("p", { class: "error" }, "Failed: " + item.error) : null,
      flipSummary(flip),
      h("div", { class: "trajectory" },
        h("section", { class: "dialogue" }, h("h2", {}, "Conversation"), conversation(item, flip), exactMessages(item, run.source)),
        judgePanel(item, entry.suite.judge))
    );
  }

  // -- compare page ------------------------------------------------------------------------

  function renderCompare(params) {
    const first = entries.get(params.get("a") || "") || entries.values().next().value;
    if (!first) {
      show(h("p", {}, "No models to compare."));
      return;
    }
    const suite = first.suite;
    const models = suite.models.filter((r) => entries.has(r.slug));
    const a = first.row.slug;
    const bEntry = entries.get(params.get("b") || "");
    const b = bEntry && bEntry.suite === suite ? bEntry.row.slug : (models.find((r) => r.slug !== a) || first.row).slug;
    show(h("p", { class: "loading" }, "Loading…"));
    const expected = location.hash;
    Promise.all([loadModel(a), loadModel(b)]).then(([ma, mb]) => {
      if (location.hash === expected) drawCompare(suite, ma, mb, params);
    }, (error) => show(h("p", { class: "error" }, error.message)));
  }

  function drawCompare(suite, ma, mb, params) {
    const units = new Map();
    for (const item of ma.items.concat(mb.items)) if (!units.has(unitKey(item))) units.set(unitKey(item), item);
    const wanted = [params.get("v"), params.get("m"), params.get("s")].join("\u001f");
    const unit = units.get(wanted) || units.values().next().value;
    const runsA = ma.runs.map((r) => r.run);
    const runsB = mb.runs.map((r) => r.run);
    const ra = runsA.includes(Number(params.get("ra"))) ? Number(params.get("ra")) : runsA[0];
    const rb = runsB.includes(Number(params.get("rb"))) ? Number(params.get("rb")) : runsB[0];
    const current = { a: ma.slug, b: mb.slug, v: unit && unit.variant, m: unit && unit.mode, s: unit && unit.scenario, ra, rb };
    function go(change) {
      location.hash = compareHref(Object.assign({}, current, change));
    }
    const modelSelect = (id, value, key) => h("select", { id, "aria-label": id, onchange: (e) => go({ [key]: e.target.value }) },
      suite.models.map((r) => h("option", { value: r.slug, selected: r.slug === value }, r.model)));
    const runSelect = (id, runs, value, key) => h("select", { id, "aria-label": id, onchange: (e) => go({ [key]: e.target.value }) },
      runs.map((r) => h("option", { value: String(r), selected: r === value }, "run " + r)));
    const unitSelect = h("select", { id: "scenario", "aria-label": "scenario", onchange: (e) => {
      const chosen = units.get(e.target.value);
      if (chosen) go({ v: chosen.variant, m: chosen.mode, s: chosen.scenario });
    } }, Array.from(units.entries()).map(([key, item]) => {
      const title = scenarioOf(suite, item.scenario).title;
      const cell = multiCell(suite, ma) || multiCell(suite, mb) ? " (" + item.variant + ", " + item.mode + ")" : "";
      return h("option", { value: key, selected: unit && key === unitKey(unit) }, title + cell);
    }));
    function side(model, run) {
      const item = unit ? model.items.find((i) => unitKey(i) === unitKey(unit) && i.run === run) : null;
      const head = h("h2", {}, h("a", { href: modelHref(model.slug) }, model.model), " · run " + run);
      if (!item) return h("section", { class: "side" }, head, h("p", { class: "note" }, "This model has no conversation for this scenario and run."));
      const chosen = item.judgments.find((j) => j.judge === suite.judge && !j.repeat);
      return h("section", { class: "side" }, head,
        h("p", { class: "meta" }, item.score !== null ? h("span", { class: scoreClass(item.score) + " pill" }, "score " + num(item.score, 1) + "/10") : item.judged || item.status,
          " · ", h("a", { href: itemHref(model.slug, item.id) }, "open the full trajectory")),
        conversation(item),
        chosen && chosen.reasoning ? h("div", { class: "verdict chosen" }, h("h3", {}, "Judge: " + chosen.judge), text(chosen.reasoning)) : null);
    }
    const title = unit ? scenarioOf(suite, unit.scenario).title : "no scenario";
    show(
      crumbs(h("a", { href: "#/" }, "Leaderboard"), h("span", {}, "Compare")),
      h("h1", {}, "Compare: " + title),
      h("div", { class: "tools compare-tools" },
        h("label", {}, "Model A ", modelSelect("model-a", ma.slug, "a"), " ", runSelect("run-a", runsA, ra, "ra")),
        h("label", {}, "Model B ", modelSelect("model-b", mb.slug, "b"), " ", runSelect("run-b", runsB, rb, "rb")),
        h("label", {}, "Scenario ", unitSelect)),
      h("div", { class: "compare" }, side(ma, ra), side(mb, rb))
    );
  }

  window.addEventListener("hashchange", render);
  render();
})();
