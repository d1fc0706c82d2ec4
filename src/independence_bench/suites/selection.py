"""Selectors: one cell of a suite — some experiments, prompt variants or delivery modes — alone.

`aib run`, `estimate`, `leaderboard` and `report` take `--experiments`, `--variants` and
`--modes`. For a run, `Suite.select` narrows the suite the way `Suite.subset` does for
`--scenarios`: the result is a suite of its own, with its own content hash, so a selected run
never mixes with a full one. For reading, `Selection.matches` keeps the stored items of the
chosen cells, and `check_against` names the values the store actually holds when one is unknown.

The Independence Index is a weighted sum over experiments. A selection that leaves out an
experiment the formula needs therefore has no index: the rows show the selected experiments'
metrics and are marked partial, never an index computed from part of its terms. Selecting
variants or modes keeps every experiment, so the index is the index of those cells.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from independence_bench.errors import UserError
from independence_bench.suites.delivery import DELIVERY_MODES
from independence_bench.suites.kinds import EXPERIMENTS


def split_list(value: str | None) -> tuple[str, ...]:
    """A comma-separated option as a tuple of its non-empty, stripped parts."""
    return tuple(part.strip() for part in (value or "").split(",") if part.strip())


@dataclass(frozen=True)
class Selection:
    """Which experiments, prompt variants and delivery modes to keep; empty keeps all."""

    experiments: tuple[str, ...] = ()
    variants: tuple[str, ...] = ()
    modes: tuple[str, ...] = ()

    @classmethod
    def parse(cls, experiments: str | None, variants: str | None, modes: str | None) -> Selection:
        """The selection of three comma-separated options, checked against the vocabulary."""
        selection = cls(split_list(experiments), split_list(variants), split_list(modes))
        _check("--experiments", selection.experiments, EXPERIMENTS)
        _check("--modes", selection.modes, DELIVERY_MODES)
        return selection

    @property
    def active(self) -> bool:
        return bool(self.experiments or self.variants or self.modes)

    def matches(self, experiment: str, variant: str, mode: str) -> bool:
        """Whether an item of this experiment, variant and mode is selected."""
        return (
            (not self.experiments or experiment in self.experiments)
            and (not self.variants or variant in self.variants)
            and (not self.modes or mode in self.modes)
        )

    def describe(self) -> str:
        """`experiments identity, stability; modes tool_role` ('' when nothing is selected)."""
        parts = [
            f"{name} {', '.join(values)}"
            for name, values in (
                ("experiments", self.experiments),
                ("variants", self.variants),
                ("modes", self.modes),
            )
            if values
        ]
        return "; ".join(parts)

    def as_json(self) -> dict[str, list[str]]:
        return {
            "experiments": list(self.experiments),
            "variants": list(self.variants),
            "modes": list(self.modes),
        }

    def check_against(
        self, experiments: Iterable[str], variants: Iterable[str], modes: Iterable[str], where: str
    ) -> None:
        """Raise `UserError` when a selected value is not among those `where` holds."""
        _check("--experiments", self.experiments, tuple(dict.fromkeys(experiments)), where)
        _check("--variants", self.variants, tuple(dict.fromkeys(variants)), where)
        _check("--modes", self.modes, tuple(dict.fromkeys(modes)), where)

    def left_out(self, experiments: Iterable[str]) -> tuple[str, ...]:
        """Those of `experiments` this selection excludes, in `EXPERIMENTS` order."""
        if not self.experiments:
            return ()
        found = {e for e in experiments if e not in self.experiments}
        rank = {e: i for i, e in enumerate(EXPERIMENTS)}
        return tuple(sorted(found, key=lambda e: (rank.get(e, len(rank)), e)))


EVERYTHING = Selection()
"""The empty selection: every experiment, variant and mode."""


def _check(option: str, chosen: tuple[str, ...], valid: tuple[str, ...], where: str = "") -> None:
    unknown = [value for value in chosen if value not in valid]
    if unknown:
        place = f" in {where}" if where else ""
        raise UserError(
            f"{option}: no {unknown[0]!r}{place}; choose from: {', '.join(sorted(valid))}"
        )
