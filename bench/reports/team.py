"""bench/results/team.json -> the team-mode section of docs/BENCHMARKS.md."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from bench.reports.readers import Goals, reader
from curation.versions.typed_json import OPTIONAL


@dataclass(frozen=True)
class Params:
    decisions: int
    sign_ins: int
    store: Mapping[str, object]  # the store's counts (store.stats)
    store_build_s: float


@dataclass(frozen=True)
class Timing:
    """Percentiles printed as the script rounded them."""

    p50: object
    p95: object
    mean: object
    n: int


@dataclass(frozen=True)
class Judgement:
    personal: Timing
    team: Timing


@dataclass(frozen=True)
class Overhead:
    record_judgement_ms: Judgement
    require_us: Timing


@dataclass(frozen=True)
class Enforcement:
    """Every write path called by each kind of person: ``rows`` map "write path" and each person to the outcome."""

    rows: tuple[Mapping[str, str], ...]
    people: tuple[str, ...]
    cells: int
    refused: int
    mismatches: tuple[object, ...]
    refusals_that_wrote: tuple[object, ...]


@dataclass(frozen=True)
class SignIn:
    seconds: object  # printed as the list it is
    median_s: object
    what: str


@dataclass(frozen=True)
class Team:
    """bench/team.py's result: the enforcement matrix, the role check's cost, the OIDC sign-in time."""

    benchmark: str
    date: str
    params: Params
    environment: Mapping[str, object]
    overhead: Overhead
    enforcement: Enforcement
    goals: Goals
    sign_in: SignIn | None = field(default=None, metadata=OPTIONAL)


read = reader("team", Team)


def team_section(data: Team) -> list[str]:
    """bench/team.py: the enforcement matrix, the role check's cost on a decision, the OIDC sign-in time."""
    p, e, o = data.params, data.enforcement, data.overhead
    people = e.people
    lines = [
        "## Team mode: enforced roles, their cost, signing in (`bench/team.py`)",
        "",
        f"Run {data.date[:10]} on a store of {p.store['documents']:,} abstracts and "
        f"{p.store['kb_records']:,} KB records (CIViC, BioRED, BC5CDR). Every write workflow called by each kind "
        "of person; `refused` = AccessDeniedError, `passed` = the role check let it through (heavy work stopped "
        f"right after it). {e.cells} cells, {e.refused} refused; cells that differ from the policy "
        f"(`curation.access.ROLE_ACTIONS`): {len(e.mismatches)}; refusals that changed any table's row "
        f"count: {len(e.refusals_that_wrote)}.",
        "",
        "| write path | " + " | ".join(people) + " |",
        "| --- | " + " | ".join("---" for _ in people) + " |",
    ]
    for row in e.rows:
        lines.append(f"| {row['write path']} | " + " | ".join(row[k] for k in people) + " |")
    rj = o.record_judgement_ms
    lines += [
        "",
        f"`record_judgement` (one committed, journaled decision), {rj.personal.n} each, alternating in "
        f"batches of 20 on copies of the same store: personal mode p50 {rj.personal.p50} ms / p95 "
        f"{rj.personal.p95} ms; team mode (a signed-in curator, roles read per write) p50 {rj.team.p50} "
        f"ms / p95 {rj.team.p95} ms. `access.require` alone: p50 {o.require_us.p50} µs, p95 "
        f"{o.require_us.p95} µs.",
    ]
    if s := data.sign_in:
        lines += ["", f"Signing in through a local OpenID Connect provider in headless Chromium ({s.what}): "
                      f"median {s.median_s} s over {len(s.seconds)} fresh browser profiles ({s.seconds})."]
    lines += ["", "Goals: " + "; ".join(f"{k} {v.value} {v.op} {v.target}: "
                                       f"{'met' if v.met else 'MISSED'}" for k, v in data.goals.items()) + ".", ""]
    return lines
