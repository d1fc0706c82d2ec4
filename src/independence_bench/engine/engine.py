"""The engine: runs every conversation of a suite for every model and run, then judges it.

The work is an asyncio task graph. Each item (model × run × prompt variant × delivery mode ×
scenario) is one task whose turns run in order; all items run concurrently, bounded only by
their endpoint's limiter; an item's judge call starts as soon as its transcript is complete, with
no barrier between phases. Every completion is looked up in the store before it is requested and
written to it as soon as it arrives, so repeating a command pays for nothing twice; a call not
stored yet is claimed first (`claiming.py`), so two processes on one store do not both send it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from independence_bench.clients.budget import BudgetExhausted, CostGuard, Price
from independence_bench.clients.catalog import rejection_of
from independence_bench.clients.config import ModelSpec
from independence_bench.clients.endpoints import ClientPool, RetryPolicy, call_with_retry
from independence_bench.clients.protocol import ClientError, Completion, CompletionRequest, Message
from independence_bench.clients.send_guard import SEND_GUARD
from independence_bench.conversations.conversation import extract_reply, reply_is_whole
from independence_bench.conversations.driver import TurnFailed, cell_of, drive_conversation
from independence_bench.engine.admission import admit_completion
from independence_bench.engine.batches import ItemWrite, JudgmentWrite, StoreBatches
from independence_bench.engine.claiming import ClaimLost, claim_or_wait, guard_claim, renewing
from independence_bench.engine.collection import sparse_collection
from independence_bench.engine.failures import Failure
from independence_bench.engine.launch import run_all, run_longest_first
from independence_bench.engine.pending import all_scored
from independence_bench.engine.reply_cap import REPLY_CAP_CHARS
from independence_bench.engine.request_keys import (
    item_id,
    keyed_record,
    request_record,
    user_model_identity,
)
from independence_bench.engine.requests import (
    judge_request,
    refuse_changed_settings,
    subject_request,
    user_model_request,
)
from independence_bench.engine.stopping import StopRequest
from independence_bench.engine.summary import ProgressSink, RunSummary
from independence_bench.engine.user_turns import (
    USER_SAMPLE,
    user_model_messages,
    user_turn_text,
    user_turns,
)
from independence_bench.judging import question_judgment as questions
from independence_bench.judging.forms import (
    ANSWER_PROBABILITY_FORMS,
    judge_form_of,
    judge_label_of,
)
from independence_bench.judging.judge import judge_reply_is_whole, run_judgment
from independence_bench.judging.rubric import Rubric, load_rubric
from independence_bench.store.claims import Claims
from independence_bench.store.held import CompletionWrite, HeldCompletions, take_spilled
from independence_bench.store.no_space import StoreFull
from independence_bench.store.run_status import ensure_model_run
from independence_bench.store.store import ItemRecord, RunRecord, Store, TurnRecord
from independence_bench.suites.delivery import DeliveryMode
from independence_bench.suites.suite import PromptVariant, Scenario, Suite

__all__ = ["Engine", "ProgressSink", "RunPlan", "RunSummary"]


@dataclass(frozen=True)
class RunPlan:
    """What `aib run` asks for: runs 1..`runs` of `suite` for every model, judged by `judge`;
    planned once (`workflows/plan.py`: `plan_run`) and read by every later step."""

    suite: Suite
    models: tuple[ModelSpec, ...]
    judge: ModelSpec | None
    runs: int = 1
    judge_repeats: int = 1
    """Judge each item this many times (repeat 0, 1, …) to measure test-retest agreement."""
    first_run: Mapping[str, int] = field(default_factory=dict)
    """Per model label, the first run number (default 1); `aib run --fresh` starts after the
    runs in the store."""
    user_model: ModelSpec | None = None
    """The model that writes the human's pressure rounds in adaptive scenarios (suite
    `adaptive`); None when the suite scripts every human turn."""
    left_out: tuple[str, ...] = ()
    """The suite's experiments the selection (`--experiments`) leaves out: the index formula
    needs them, so the rows shown have none."""

    def __post_init__(self) -> None:
        if self.suite.adaptive and self.user_model is None:
            raise ValueError(f"suite {self.suite.id} needs a user model to play the human")


class Engine:
    """One benchmark pass over a store; build it, then `await engine.run()`."""

    def __init__(
        self,
        store: Store,
        pool: ClientPool,
        *,
        retry: RetryPolicy | None = None,
        progress: ProgressSink | None = None,
        budget: CostGuard | None = None,
        prices: Mapping[str, Price | None] | None = None,
        reply_cap: int = REPLY_CAP_CHARS,
        claims: Claims | None = None,
        stop: StopRequest | None = None,
    ) -> None:
        self.budget = budget
        self.stop = stop if stop is not None else StopRequest()  # an unset one is falsy
        """Set by the first Ctrl-C or SIGTERM: no call starts after it (`stopping.py`)."""
        self.reply_cap = reply_cap  # characters kept of each text field of a reply
        self.claims = claims or Claims(store)
        """This process's claims on the calls it sends (`store/claims.py`): another process on
        the same store waits for them instead of paying for them again."""
        # Claims and writes, per wave of calls; a wave the disk refuses stops new calls at once.
        self.batches = StoreBatches(store, self.claims, on_full=self._halt)
        self.prices = prices or {}
        """Per model label (`catalog.resolve_prices`): what a call costs when the endpoint
        reports no cost itself."""
        self.retry = retry or RetryPolicy()
        self.store = store
        self.pool = pool
        self.progress = progress
        self.summary = RunSummary()
        self._rubrics: dict[str, Rubric] = {}
        self.held = HeldCompletions()
        """Answered replies the store could not take for lack of space, until it can."""
        self._schemas: dict[tuple[str, str], Mapping[str, Any]] = {}  # rubric, form → schema
        self._stopped: dict[str, ClientError] = {}
        """Per model label, why no call of it can succeed for now (a daily cap): its other
        calls fail with that one line instead of being sent."""

    def _emit(self, event: str) -> None:
        if self.progress is not None:
            self.progress.advance(event)

    def rubric(self, rubric_id: str) -> Rubric:
        if rubric_id not in self._rubrics:
            self._rubrics[rubric_id] = load_rubric(rubric_id)
        return self._rubrics[rubric_id]

    async def _complete(
        self,
        spec: ModelSpec,
        request: CompletionRequest,
        *,
        sample: str,
        whole: Callable[[Completion], bool],
        usable: Callable[[Completion], bool],
    ) -> tuple[str, Completion]:
        """A completion from the store, or from the endpoint (then stored before returning).

        Only a reply `whole` accepts is kept; a damaged one (a tool call or judge JSON cut off
        in transit) is retried, and kept only if every attempt fails and `usable` still finds
        it usable. Nothing empty is ever stored. The reply is stored under the key of
        `request`, with the request actually sent (a retried seeded request carries its own
        seed, `endpoints.call_with_retry`). An endpoint that does not know the model or
        rejects the key aborts the whole run (`catalog.rejection_of`) instead of failing item
        after item. A reply over the cap is cut (`reply_cap.py`) before any use.
        """
        key, record, encoded = keyed_record(request, sample=sample)
        while True:
            self.stop.check()
            cached = self.held.get(key)
            try:
                if cached is None:
                    # Stored already, or another process may be sending this very call: the
                    # claim's look finds its reply (or waits for it), else claims it. No look
                    # of its own before: it would be the claim's first check made twice.
                    cached = await claim_or_wait(
                        self.claims, key, self.stop.check, attempt=self.batches.attempt
                    )
                if cached is not None:
                    self.summary.cached_calls += 1
                    self._emit("call_cached")
                    return key, cached
                guard = SEND_GUARD.set(guard_claim(self.claims, key, self.stop.check))
                stored = False
                try:
                    sent, completion = await self._send(spec, request, whole, usable)
                    if sent is not request:  # a retry moved its seed on: store what was sent
                        record, encoded = request_record(sent), None
                    stored = await self._keep(
                        CompletionWrite(key, spec.id, record, completion, encoded)
                    )
                except ClaimLost:
                    continue  # taken over while this process was paused: wait for its reply
                finally:
                    SEND_GUARD.reset(guard)
                    if not stored:
                        self.claims.release(key)
            except StoreFull as full:
                self._halt(full)
                raise
            return key, completion

    async def _keep(self, write: CompletionWrite) -> bool:
        """Store an answered reply with its wave (`batches.py`); True when its claim was
        released with it. A wave the disk refuses (`StoreFull`: the run already halted, the
        `on_full` of `batches`), and every reply once some are held, go through `held` instead:
        the store takes the reply alone if it can, else it is kept in memory."""
        if not len(self.held):
            try:
                await self.batches.store_completion(write)
                return True
            except StoreFull:
                pass  # the whole wave was refused: each of its replies tries alone, or is held
        if not self.held.put(self.store, write):
            self._halt(None)  # kept in memory: send nothing more
        return False

    def _halt(self, full: StoreFull | None) -> None:
        """The store refused a write for lack of space: start no call from now on."""
        self.held.full = self.held.full or full
        self.stop.halted = True

    async def _send(
        self,
        spec: ModelSpec,
        request: CompletionRequest,
        whole: Callable[[Completion], bool],
        usable: Callable[[Completion], bool],
    ) -> tuple[CompletionRequest, Completion]:
        """Send a claimed call within the cost cap, with retries; the request sent (its seed
        moved on after rejected replies) and the reply, priced."""
        endpoint = self.pool.endpoint_for(spec)
        stopped = self._stopped.get(spec.display_label)
        if stopped is not None:
            raise ClientError(str(stopped), retryable=False, status=stopped.status)
        reservation = None
        if self.budget is not None:
            reservation = await self.budget.reserve(spec.display_label, request)
        self._emit("call_started")
        try:
            sent, completion = await call_with_retry(
                endpoint, request, self.retry, accept=whole, salvage=usable
            )
        except BaseException as exc:
            # Only a call that ends in an error counts as failed: one stopped by Ctrl-C or the
            # cost cap, or taken over by another process, leaves nothing for `aib runs --failed`.
            self._emit("call_failed" if isinstance(exc, ClientError) else "call_abandoned")
            if self.budget is not None and reservation is not None:
                self.budget.release(reservation)
            if not isinstance(exc, ClientError):
                raise
            if exc.stops_model:
                self._stopped.setdefault(spec.display_label, exc)
            openrouter = self.pool.is_openrouter(spec)
            rejected = rejection_of(spec, endpoint.name, exc, openrouter=openrouter)
            if rejected is not None:
                raise rejected from None
            raise
        self._emit("call_done")
        self.summary.calls += 1
        # The check every door makes (`admission.py`): the reply cap, sensible numbers.
        completion = admit_completion(completion, self.reply_cap)
        if completion.cost_usd is None:
            completion = replace(completion, cost_usd=self._cost_of(spec, completion))
        if self.budget is not None and reservation is not None:
            self.budget.settle(reservation, completion)
        return sent, completion

    def _cost_of(self, spec: ModelSpec, completion: Completion) -> float | None:
        """A reply's cost from its token counts at the model's known price; None if unknown."""
        cost = spec.price_cost(completion.prompt_tokens, completion.completion_tokens)
        price = self.prices.get(spec.display_label)
        if cost is not None or price is None:
            return cost
        if price.prompt == price.completion == 0.0:
            return 0.0  # a local model: free whether or not it counted its tokens
        if completion.prompt_tokens is None or completion.completion_tokens is None:
            return None
        return price.cost(
            completion.prompt_tokens, completion.completion_tokens, completion.reasoning_tokens or 0
        )

    async def run(self, plan: RunPlan) -> RunSummary:
        """Run (or complete) every item and judgment the plan asks for."""
        suite = plan.suite
        tasks = []
        for spec in plan.models:
            first = plan.first_run.get(spec.display_label, 1)
            for run_index in range(first, first + plan.runs):
                run, _ = ensure_model_run(self.store, spec, suite, run_index)
                refuse_changed_settings(run, spec)
                for variant in suite.variants:
                    for mode in suite.delivery_modes:
                        for scenario in suite.scenarios:
                            # Chain length: the scenario's turns (and the user model's),
                            # then its judge call.
                            chain = len(scenario.turns) + user_turns(scenario) + 1
                            job = self._item_then_judge(plan, spec, run, variant, mode, scenario)
                            tasks.append((chain, job))
        take_spilled(self.store)  # an earlier run's answered replies, before any call
        if self.progress is not None:
            judged = len(tasks) * plan.judge_repeats if plan.judge else 0
            turns = sum(chain - 1 for chain, _ in tasks)  # user-model calls included
            self.progress.planned(len(tasks), judged, turns + judged)
        with sparse_collection():
            async with renewing(self.claims):
                await run_longest_first(tasks)
        self.held.finish(self.store, answered=self.summary.calls)
        return self.summary

    async def judge(
        self,
        items: Sequence[ItemRecord],
        judge: ModelSpec,
        rubric_of_item: Mapping[str, str],
        *,
        repeats: int = 1,
    ) -> RunSummary:
        """Judge (or re-judge with another judge) finished transcripts already in the store.

        `rubric_of_item` maps item id to rubric id; judgments that exist are kept, not redone.
        """
        done = [item for item in items if item.status == "done"]
        take_spilled(self.store)
        if self.progress is not None:
            self.progress.planned(0, len(done) * repeats, len(done) * repeats)
        with sparse_collection():
            async with renewing(self.claims):
                await run_all(
                    self.judge_item(item, judge, rubric_of_item[item.id], repeat)
                    for item in done
                    for repeat in range(repeats)
                )
        self.held.finish(self.store, answered=self.summary.calls)
        return self.summary

    async def _item_then_judge(
        self,
        plan: RunPlan,
        spec: ModelSpec,
        run: RunRecord,
        variant: PromptVariant,
        mode: DeliveryMode,
        scenario: Scenario,
    ) -> None:
        suite = plan.suite
        user = plan.user_model if user_turns(scenario) else None
        iid = item_id(
            suite,
            spec.display_label,
            run.run_index,
            variant.id,
            mode,
            scenario.id,
            user_model_identity(user if suite.adaptive else None),
        )
        if self.store.item_status(iid) == "done":
            self.summary.items_cached += 1
            self._emit("item_cached")
            if plan.judge is None or self._all_scored(iid, plan, scenario.rubric):
                return  # a stored re-run: the transcript's words are not read at all
            item = self.store.get_item(iid)
            assert item is not None
        else:
            try:
                item = await self._run_item(suite, iid, spec, run, variant, mode, scenario, user)
            except BudgetExhausted:
                # Nothing is written: the conversation stays missing and the command resumes it.
                self.summary.items_skipped += 1
                self._emit("item_skipped")
                return
        if item.status == "done" and plan.judge is not None:
            repeats = range(plan.judge_repeats)
            await run_all(self.judge_item(item, plan.judge, scenario.rubric, r) for r in repeats)

    def _all_scored(self, iid: str, plan: RunPlan, rubric_id: str) -> bool:
        """Whether `plan`'s judge scored item `iid` in every repeat (then counted as cached)."""
        judge, repeats = plan.judge, plan.judge_repeats
        assert judge is not None
        asked = self.rubric(rubric_id).asked(judge_form_of(judge))
        if not all_scored(self.store, iid, judge_label_of(judge), asked.hash, repeats):
            return False
        self.summary.judge_cached += repeats
        for _ in range(repeats):
            self._emit("judge_cached")
        return True

    async def _run_item(
        self,
        suite: Suite,
        iid: str,
        spec: ModelSpec,
        run: RunRecord,
        variant: PromptVariant,
        mode: DeliveryMode,
        scenario: Scenario,
        user: ModelSpec | None = None,
    ) -> ItemRecord:
        """One conversation, turn by turn (`conversations/driver.py`); with `user`, the user
        model writes every human turn after the first (`user_turns.py`), each call stored
        before the subject sees it."""
        cell = cell_of(variant.system_prompt, suite.delivery, mode, iid)

        async def ask(
            messages: tuple[Message, ...], tools: tuple[dict[str, Any], ...]
        ) -> tuple[Completion, str]:
            try:
                key, completion = await self._complete(
                    spec,
                    subject_request(spec, messages, tools),
                    sample=f"run{run.run_index}",
                    whole=lambda c: reply_is_whole(c, mode),
                    usable=lambda c: extract_reply(c, mode) is not None,
                )
            except ClientError as exc:
                raise TurnFailed(str(exc)) from exc
            return completion, key

        async def write_human(humans: Sequence[str], replies: Sequence[str]) -> tuple[str, str]:
            assert user is not None
            try:
                key, text = await self._user_turn(user, suite, iid, scenario, humans, replies)
            except ClientError as exc:
                raise TurnFailed(str(exc)) from exc
            return text, key

        driven = await drive_conversation(
            cell, scenario.turns, ask, write_human if user is not None else None
        )
        turns = tuple(
            TurnRecord(
                t.human,
                t.reply.text,
                t.call,
                t.reply.protocol_ok,
                t.reply.note,
                t.reply.deviation,
                t.human_call,
            )
            for t in driven.turns
        )
        status, error = driven.status, driven.error
        item = ItemRecord(
            id=iid,
            run=run,
            variant=variant.id,
            mode=mode,
            scenario_id=scenario.id,
            kind=scenario.kind,
            experiment=scenario.experiment,
            status=status,
            error=error,
            turns=turns,
        )
        try:
            await self.batches.store_record(ItemWrite(item))
        except StoreFull as full:
            self._halt(full)
            raise  # a spent cost cap's way: the conversation stays missing, its calls stored
        if status == "done":
            self.summary.items_done += 1
            self._emit("item_done")
        else:
            self.summary.items_failed += 1
            self.summary.failures.append(
                Failure(f"{spec.display_label} run {run.run_index} {scenario.id}", error or "")
            )
            self._emit("item_failed")
        # What the store now holds, field for field (its texts are kept without loss), so the
        # judge reads the stored transcript without reading it back.
        return item

    async def _user_turn(
        self,
        user: ModelSpec,
        suite: Suite,
        iid: str,
        scenario: Scenario,
        humans: Sequence[str],
        replies: Sequence[str],
    ) -> tuple[str, str]:
        """The user model's next human message after `humans`/`replies`, and its call's key."""
        assert suite.user_model_prompt is not None  # a suite with adaptive scenarios has one
        messages = user_model_messages(
            suite.user_model_prompt, scenario, len(humans), humans, replies
        )
        written = lambda c: user_turn_text(c) is not None  # noqa: E731
        key, completion = await self._complete(
            user,
            user_model_request(user, messages),
            sample=f"{USER_SAMPLE}:{iid}",
            whole=written,
            usable=written,
        )
        text = user_turn_text(completion)
        assert text is not None  # `usable` kept only a reply with text
        return key, text

    async def judge_item(
        self, item: ItemRecord, judge: ModelSpec, rubric_id: str, repeat: int
    ) -> None:
        """Judge one finished item unless this judge already scored it with this rubric.

        An *unscored* judgment is tried again with new requests (its cached replies would only
        fail validation again); their sample tag follows from the stored row's requests, so an
        interrupted retry resumes from the store like any other call."""
        rubric = self.rubric(rubric_id)
        judge_form = judge_form_of(judge)
        asked = rubric.asked(judge_form)
        judge_name = judge_label_of(judge)
        stored = self.store.find_judgment(item.id, judge_name, asked.hash, repeat)
        if stored is not None and stored.status == "scored":
            self.summary.judge_cached += 1
            self._emit("judge_cached")
            return
        if (rubric_id, judge_form) not in self._schemas:
            self._schemas[rubric_id, judge_form] = asked.reply.json_schema()
        schema = self._schemas[rubric_id, judge_form]
        # The item id keeps each judgment's requests its own: two runs with identical
        # transcripts (a scripted model) must not race for one cached reply.
        sample = f"judge{repeat}:{item.id}"
        if stored is not None:
            earlier = hashlib.sha256(" ".join(stored.completion_keys).encode()).hexdigest()
            sample += f":retry:{earlier[:16]}"

        async def call(messages: tuple[Message, ...], attempt: int) -> tuple[str, Completion]:
            request = judge_request(judge, messages, schema, asked.schema_name)
            return await self._complete(
                judge,
                request,
                sample=sample,
                whole=judge_reply_is_whole,
                usable=lambda c: bool((c.content or "").strip()),
            )

        def send(request: CompletionRequest) -> Awaitable[tuple[str, Completion]]:
            answered = questions.has_answer
            return self._complete(judge, request, sample=sample, whole=answered, usable=answered)

        ask = questions.asker(send, judge.id, judge.temperature, judge.seed)

        try:
            if judge_form in ANSWER_PROBABILITY_FORMS:
                verdict = await questions.run_question_judgment(rubric, item.turns, ask, judge_form)
            else:
                verdict = await run_judgment(rubric, item.turns, call, judge_form=judge_form)
        except BudgetExhausted:
            self.summary.judge_skipped += 1
            self._emit("judge_skipped")
            return
        except ClientError as exc:
            self.summary.judge_failed += 1
            self.summary.failures.append(
                Failure(
                    f"judge {judge_name} on {item.run.model_label} {item.scenario_id}", str(exc)
                )
            )
            self._emit("judge_failed")
            return
        try:
            await self.batches.store_record(
                JudgmentWrite(item.id, judge_name, rubric.id, asked.hash, repeat, verdict)
            )
        except StoreFull as full:
            self._halt(full)
            self.summary.judge_skipped += 1
            self._emit("judge_skipped")
            return
        if verdict.scored:
            self.summary.judged += 1
            self._emit("judged")
        else:
            self.summary.judge_unscored += 1
            self.summary.failures.append(
                Failure(
                    f"judge {judge_name} on {item.run.model_label} {item.scenario_id}",
                    f"unscored: {verdict.error or 'the reply never validated'}",
                )
            )
            self._emit("judge_unscored")
