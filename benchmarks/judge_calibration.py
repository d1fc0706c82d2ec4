"""Judge calibration: how far the embedded judge is from the imported (strong) judge.

Imports the upstream sample (the earlier implementation's result folders, judged by
google/gemini-3-flash-preview) into a temporary store, draws a stratified sample of its judged
conversations, re-judges exactly those with the embedded judge, and prints what
`aib judges --reference <imported judge>` prints: per metric the items, Spearman ρ,
Krippendorff's α and the mean signed difference (judge − reference) with 95% intervals, and
per configuration the Spearman ρ of the two judges' means for the index and every metric.
Then the wall time.

The sample is stratified by configuration × scenario kind: the items are spread as evenly as
possible over the configurations, and within a configuration the kinds are taken in the order
of `KIND_ORDER` (the pressure kinds first, then what completes the index), one item of a kind
at a time, each drawn at random from that stratum with `--seed`. A smaller sample is a prefix
of a larger one with the same seed, so a store kept with `--keep` is reused when N grows.

    python benchmarks/judge_calibration.py --form both      # 60 items, both forms
    python benchmarks/judge_calibration.py --items 4        # the CI sample, the default form
    python benchmarks/judge_calibration.py --sample PATH --keep aib-calibration --threads 1

`--threads 1` on a CPU other jobs are using: two llama.cpp threads that each get a fraction of
a core wait on each other and were many times slower here.

A judge *form* (`--form`) is how the judge is asked (`judging/forms.py`): ``holistic``
(the rubric's scores in one reply), ``checklist`` (yes/no answers scored by a fixed rule),
``probability`` (each question's P(yes) from the answer's log-probabilities) or ``extraction``
(copied spans compared in code), each stored as ``<judge>#<form>`` but holistic. Several forms
(``probability,extraction``; ``both`` = holistic and checklist; ``all``) are judged one after
the other on the same sample, each with its own report, its calls (new and from the store: forms
that ask the same question share the stored reply) and its time per judgment. The default is the
form the embedded judge uses by default (`LOCAL_JUDGE_FORM`), so the CI sample judges each item
once. Without the sample the script prints ``skipped: …`` and exits 0.

`--shard K/N` judges every Nth item of the sample from the Kth, so that N processes on one
`--keep` store split a long run between them (each process's own report covers its items only);
`--report-only` judges nothing and prints the report of the forms asked from what the `--keep`
store holds (after such runs, or a run that finished in the background).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from independence_bench.clients.config import ModelSpec
from independence_bench.clients.local.embedded import EmbeddedRuntime
from independence_bench.clients.local.weights import weights_cache_dir
from independence_bench.clients.protocol import Completion, CompletionRequest, ModelClient
from independence_bench.engine.engine import RunSummary
from independence_bench.gathering.options import AnalysisOptions
from independence_bench.judging.forms import (
    JUDGE_FORMS,
    LOCAL_JUDGE_FORM,
    JudgeForm,
    judge_form_named,
    judge_label_of,
)
from independence_bench.legacy.importer import import_legacy_tree
from independence_bench.stats.core import Resampling
from independence_bench.store.store import ItemRecord, Store
from independence_bench.text.counts import count_of
from independence_bench.workflows.analyses import judges_command
from independence_bench.workflows.judge import JudgeOptions, judge_stored_async
from independence_bench.workflows.plan import LOCAL_JUDGE as DEFAULT_JUDGE

DEFAULT_SAMPLE = Path(__file__).resolve().parents[2] / "shared" / "data" / "upstream-sample"
SUITE = "legacy-v2"
KIND_ORDER = (
    "boundary",
    "stability",
    "negotiation",
    "name_gender",
    "boundary",
    "stability",
    "direct",
    "psych",
    "tool_context",
)
"""Within a configuration, the kinds in the order they are sampled (then round again)."""


def stratified_sample(
    items: Sequence[ItemRecord], judged: set[str], n_items: int, seed: int
) -> list[ItemRecord]:
    """`n_items` of the reference-judged `items`, by configuration × kind (see the docstring)."""
    rng = random.Random(seed)
    strata: dict[str, dict[str, list[ItemRecord]]] = defaultdict(lambda: defaultdict(list))
    for item in sorted(items, key=lambda i: i.id):
        if item.id in judged:
            strata[item.run.model_label][item.kind].append(item)
    for by_kind in strata.values():
        for pool in by_kind.values():
            rng.shuffle(pool)
    configurations = sorted(strata)
    rng.shuffle(configurations)  # who gets the remainder when n does not divide evenly
    queues = {c: _kind_queue(strata[c]) for c in configurations}
    chosen: list[ItemRecord] = []
    while len(chosen) < n_items and any(queues.values()):
        for configuration in configurations:
            if len(chosen) < n_items and queues[configuration]:
                chosen.append(queues[configuration].pop(0))
    return chosen


def _kind_queue(by_kind: dict[str, list[ItemRecord]]) -> list[ItemRecord]:
    """One configuration's items in sampling order: `KIND_ORDER` rounds, then what is left."""
    pools = {kind: list(pool) for kind, pool in by_kind.items()}
    queue: list[ItemRecord] = []
    while any(pools.values()):
        for kind in (*KIND_ORDER, *sorted(set(pools) - set(KIND_ORDER))):
            if pools.get(kind):
                queue.append(pools[kind].pop(0))
    return queue


class TimedClient:
    """A `ModelClient` that keeps, per call sent, its wall time and how many of its prompt
    tokens the embedded client's prompt cache reused: whether the questions on one transcript
    really share their prefix."""

    def __init__(self, inner: ModelClient) -> None:
        self.inner = inner
        self.calls: list[tuple[float, int, int]] = []
        """(seconds, prompt tokens, reused prompt tokens) per call."""

    async def complete(self, request: CompletionRequest) -> Completion:
        started = time.perf_counter()
        completion = await self.inner.complete(request)
        reused = completion.extra.get("reused_prompt_tokens")
        self.calls.append(
            (
                time.perf_counter() - started,
                completion.prompt_tokens or 0,
                reused if isinstance(reused, int) else 0,
            )
        )
        return completion

    async def aclose(self) -> None:
        """Nothing: each item's pass closes its pool, and the model stays loaded for the next;
        `judge_sample` closes the runtime after the last item."""

    def summary(self) -> str:
        if not self.calls:
            return "no calls sent"
        seconds = sum(c[0] for c in self.calls)
        prompt = sum(c[1] for c in self.calls)
        reused = sum(c[2] for c in self.calls)
        fresh = [c[0] for c in self.calls if c[2] == 0]
        warm = [c[0] for c in self.calls if c[2] > 0]
        return (
            f"{count_of(len(self.calls), 'call')}, {seconds / len(self.calls):.2f} s per call; "
            f"{reused / max(prompt, 1):.0%} of prompt tokens reused from the cache; "
            f"{_timed_calls(fresh)} reading the whole prompt, "
            f"{_timed_calls(warm)} reusing a prefix"
        )


def _timed_calls(seconds: Sequence[float]) -> str:
    """Say "3 calls (20.26 s each)", "1 call (41.68 s)", or "0 calls" with no mean to show."""
    if not seconds:
        return count_of(0, "call")
    mean = f"{sum(seconds) / len(seconds):.2f} s" + (" each" if len(seconds) > 1 else "")
    return f"{count_of(len(seconds), 'call')} ({mean})"


async def judge_sample(
    data_dir: Path, item_ids: Sequence[str], judge: str, form: JudgeForm, threads: int | None
) -> tuple[RunSummary, TimedClient]:
    """Judge exactly `item_ids` with the embedded `judge` in the given form, in this process,
    one item after the other in the order given.

    One at a time, so that every question on a transcript follows the one before and reuses
    its prompt (the engine would otherwise start every judgment at once, and with more
    transcripts than the client keeps snapshots of, each question would read its transcript
    again), and so that an interrupted run leaves whole judgments of a prefix of the sample."""
    runtime = EmbeddedRuntime(weights_cache_dir(None), n_threads=threads)
    client = TimedClient(runtime.client(judge))

    def local_judge(spec: ModelSpec) -> tuple[str, ModelClient, int] | None:
        return (f"local {judge}", client, 1) if spec.id == judge else None

    total = RunSummary()
    try:
        for item_id in item_ids:
            options = JudgeOptions(
                judge=judge,
                judge_form=form,
                suite_id=SUITE,
                concurrency=1,
                data_dir=data_dir,
                factories=(local_judge,),
                show_progress=False,
                item_ids=frozenset({item_id}),
            )
            summary = await judge_stored_async(options)
            for name in ("judged", "judge_unscored", "judge_failed", "judge_cached", "calls"):
                setattr(total, name, getattr(total, name) + getattr(summary, name))
            total.cached_calls += summary.cached_calls
            total.failures.extend(summary.failures)
    finally:
        await runtime.aclose()
    return total, client


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sample", type=Path, default=DEFAULT_SAMPLE)
    parser.add_argument("--items", type=int, default=60, help="Items to re-judge (default 60).")
    parser.add_argument(
        "--seed", type=int, default=0, help="Seed of the item sample and of the intervals."
    )
    parser.add_argument("--judge", default=DEFAULT_JUDGE)
    parser.add_argument(
        "--form",
        default=LOCAL_JUDGE_FORM,
        help=f"Judge forms, comma-separated: {', '.join(JUDGE_FORMS)}; both (holistic and "
        "checklist) or all.",
    )
    parser.add_argument(
        "--report-only", action="store_true", help="Judge nothing; report what --keep holds."
    )
    parser.add_argument(
        "--shard",
        default="0/1",
        help="K/N: judge only every Nth item of the sample from the Kth (0-based), so that N "
        "processes sharing one --keep store split the work; --report-only then reports all.",
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="llama.cpp threads (default: every core; 1 is faster on a CPU shared with others).",
    )
    parser.add_argument("--keep", type=Path, default=None, help="Store folder to keep (reused).")
    args = parser.parse_args(argv)
    cache = args.sample / "cache" if (args.sample / "cache").is_dir() else args.sample
    if not cache.is_dir():
        print(f"skipped: no upstream sample at {cache}")
        return 0
    with tempfile.TemporaryDirectory(prefix="aib-calibration-") as temp:
        data_dir = args.keep or Path(temp)
        return _calibrate(args, cache, data_dir)


def _calibrate(args: argparse.Namespace, cache: Path, data_dir: Path) -> int:
    started = time.perf_counter()
    with Store(data_dir) as store:
        import_legacy_tree(cache, store)
        items = store.items(suite_id=SUITE, status="done")
        judgments = [j for j in store.judgments() if j.judge_model not in _labels(args.judge)]
    imported = sorted({j.judge_model for j in judgments})
    if len(imported) != 1:
        print(f"the sample holds judgments by {imported}; expected one imported judge")
        return 1
    reference = imported[0]
    judged = {j.item_id for j in judgments if j.status == "scored" and not j.repeat}
    sample = stratified_sample(items, judged, args.items, args.seed)
    configurations = len({item.run.model_label for item in sample})
    print(
        f"sample: {len(sample)} of {len(judged)} judged conversations, {configurations} "
        f"configurations, seed {args.seed}; reference {reference}; judge {args.judge} "
        f"({args.form})"
    )
    shard, shards = (int(part) for part in args.shard.split("/"))
    for form in _forms(args.form):
        label = judge_label_of(ModelSpec(id=args.judge, label=args.judge, judge_form=form))
        if not args.report_only:
            judging = time.perf_counter()
            ids = [i.id for n, i in enumerate(sample) if n % shards == shard]
            summary, timed = asyncio.run(
                judge_sample(data_dir, ids, args.judge, form, args.threads)
            )
            judged_s = time.perf_counter() - judging
            each = judged_s / summary.judged if summary.judged else float("nan")
            print(
                f"\n== {form} form ({label}): judged {summary.judged}, unscored "
                f"{summary.judge_unscored}, failed {summary.judge_failed}, already judged "
                f"{summary.judge_cached} in {judged_s:.0f} s ({each:.1f} s per judgment; "
                f"{count_of(summary.calls, 'call')} sent, {summary.cached_calls} from the store)"
            )
            print(f"calls: {timed.summary()}")
        else:
            print(f"\n== {form} form ({label}): report of the judgments in the store")
        options = AnalysisOptions(
            data_dir=data_dir,
            suite_id=SUITE,
            judges=(label,),
            resampling=Resampling(seed=args.seed),
        )
        judges_command(options, reference=reference, as_json=False, echo=print)
    print(f"wall time {time.perf_counter() - started:.0f} s")
    return 0


def _forms(text: str) -> list[JudgeForm]:
    """The forms `--form` names, the embedded judge's default first (the CI sample's order)."""
    if text == "all":
        chosen: tuple[JudgeForm, ...] = JUDGE_FORMS
    elif text == "both":
        chosen = ("holistic", "checklist")
    else:
        chosen = tuple(judge_form_named(name.strip()) for name in text.split(","))
    return sorted(dict.fromkeys(chosen), key=lambda form: form != LOCAL_JUDGE_FORM)


def _labels(judge: str) -> tuple[str, ...]:
    """The labels `judge`'s judgments are stored under, one per form in `JUDGE_FORMS` order."""
    return tuple(
        judge_label_of(ModelSpec(id=judge, label=judge, judge_form=f)) for f in JUDGE_FORMS
    )


if __name__ == "__main__":
    sys.exit(main())
