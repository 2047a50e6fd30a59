"""bench/_flagship.py's records in bench/results/suggest.json -> the flagship cases of docs/BENCHMARKS.md's
suggestion section (drawn by :mod:`bench.reports.suggest`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from curation.versions.typed_json import OPTIONAL


@dataclass(frozen=True)
class FlagshipRow:
    """One (gene, variant, drug) case asked on the sample: whether it applies and whether it was met."""

    gene: str
    variant: str
    drug: str
    source: str
    applies: bool
    abstracts_naming: tuple[str, ...]
    rank: int | None
    met: bool
    direction: str
    sentence: str
    top5: tuple[str, ...]
    message: str


@dataclass(frozen=True)
class Flagship:
    """bench/_flagship.py: the flagship cases on the sample and the top-5 Treatment precision there."""

    top_docs: int
    top: int
    cases: tuple[FlagshipRow, ...]
    case_table: tuple[Mapping[str, object], ...]
    sample_load_s: float
    cases_s: float
    cases_applicable: int
    cases_met: int
    flagship_applicable: int
    flagship_met: int
    missed: tuple[str, ...]
    treatment_precision: Mapping[str, object]
    annotator: str = field(default="the dictionary annotator", metadata=OPTIONAL)  # what annotated the sample


def flagship_lines(flag: Flagship | None) -> list[str]:
    """The flagship cases on the sample (those that apply), and the top-5 Treatment precision there."""
    if flag is None:
        return []
    lines = ["", f"**Flagship cases on the sample** (`bench/_flagship.py`: a fresh store loaded with the sample, "
             f"{flag.annotator}, the scorer above active; {flag.sample_load_s} s to load): a case applies "
             f"when an abstract of the top {flag.top_docs} names the drug with the query's gene or variant, and is "
             f"met when the drug is among the top {flag.top} suggestions. Met {flag.cases_met} of "
             f"{flag.cases_applicable} that apply (the written flagship cases: {flag.flagship_met} of "
             f"{flag.flagship_applicable}); {len(flag.cases) - flag.cases_applicable} do not apply.", "",
             "| gene | variant | drug | source | rank | direction | top 5 |",
             "| --- | --- | --- | --- | ---: | --- | --- |"]
    for c in flag.cases:
        if c.applies:
            lines.append(f"| {c.gene} | {c.variant} | {c.drug} | {c.source} | {c.rank if c.rank else '—'} | "
                         f"{c.direction or '—'} | {', '.join(c.top5)} |")
    p = flag.treatment_precision.get("precision")
    if isinstance(p, Mapping):
        after, before = p.get("after", {}), p.get("before", {})
        lines += ["", f"Top-5 Treatment precision on the same store (`bench/_treatments.py`'s judge, "
                  f"{flag.treatment_precision.get('suggestions_judged', {}).get('after')} suggestions of "
                  f"{len(flag.treatment_precision.get('queries', []))} CIViC queries): medicine "
                  f"{after.get('medicine')} (before the kind filter {before.get('medicine')}), medicine or CIViC "
                  f"{after.get('medicine_or_civic')}, DrugBank {after.get('drugbank')}; judged not a drug: "
                  + ", ".join(flag.treatment_precision.get("not_drugs", {}).get("after", [])[:12]) + "."]
    return lines
