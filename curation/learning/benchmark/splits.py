"""Leak-free splits, decided once and saved: grouped by concept, document-disjoint.

Rule, for a key not yet in the saved file:

1. **Documents.** A document goes to the split a hash of (seed, PMID) falls in, cut by the
   fractions (55/15/30: the test share is what gives every relation kind 100 test queries). A hash,
   unlike shuffling a list, places each document without looking at the others, so adding records
   never moves one.
2. **Groups.** Every record has an anchor (its kind's first query entity: the gene, or the chemical
   of a chemical–disease record). Anchors of one type that share a canonical name (a human and a
   mouse gene both named "TNF") form one group, so a query text never occurs in two splits. A group
   goes to the split of the first of its members already saved; otherwise to the split most of its
   records' documents are in (ties: test, then dev, so evaluation keeps what it can). Most genes
   are named in one or two documents, so they follow their documents and few records conflict.
3. **Conflicts.** A record whose group and document are in different splits is dropped (counted per
   kind and the group's split), so no document is a positive of two splits and no group is in two.

The assignment is saved as JSON (concept keys, PMIDs, and each dev/test query id with the entity
keys of its records: ids only, no text); rebuilding reads it, so dev and test never move when the
corpus or the KB grows, and a query keeps its id when a new same-named concept joins it. Keys the
file lacks are placed by the rule and counted as new. What can still change is a query's text: a
canonical name is the corpus's most used one, so new documents can change it.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from curation.files import write_atomic
from curation.learning.benchmark.corpus import BenchmarkError
from curation.learning.benchmark.records import BenchRecord, Entity

SPLITS = ("train", "dev", "test")
FRACTIONS = (0.55, 0.15, 0.3)
FORMAT = "benchmark-split/2"
_TIE_ORDER = ("test", "dev", "train")


@dataclass
class SplitAssignment:
    """Which split each anchor concept and each document is in.

    Attributes:
        seed: the hash seed for keys not yet assigned.
        fractions: train / dev / test shares for the hash rule.
        concepts: ``"<type>:<concept id>"`` → split.
        documents: PMID → split.
        queries: dev and test query id → the query entities of the records it groups (``"Gene:673|Variant:…"``),
            so a rebuild gives a query the id it was saved with even when a new concept joins its group.
        new_concepts, new_documents: how many keys this build placed by the rule (not from the file).
    """

    seed: int = 13
    fractions: tuple[float, float, float] = FRACTIONS
    concepts: dict[str, str] = field(default_factory=dict)
    documents: dict[str, str] = field(default_factory=dict)
    queries: dict[str, list[str]] = field(default_factory=dict)
    new_concepts: int = 0
    new_documents: int = 0

    def to_dict(self) -> dict[str, object]:
        return {
            "format": FORMAT,
            "seed": self.seed,
            "fractions": list(self.fractions),
            "rule": "documents by hash of (seed, pmid); concept groups by their records' documents' majority",
            "concepts": dict(sorted(self.concepts.items())),
            "documents": dict(sorted(self.documents.items())),
            "queries": {qid: sorted(members) for qid, members in sorted(self.queries.items())},
        }

    def save(self, path: str | Path) -> None:
        write_atomic(Path(path), json.dumps(self.to_dict(), indent=1) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> SplitAssignment:
        """Read a saved assignment.

        Raises:
            BenchmarkError: unreadable JSON, another format, or a split name that is not train/dev/test.
        """
        path = Path(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise BenchmarkError(f"{path}: cannot read the saved split ({exc})") from exc
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise BenchmarkError(f"{path}: not a saved split of format '{FORMAT}'")
        for section in ("concepts", "documents"):
            values = data.get(section)
            if not isinstance(values, dict):
                raise BenchmarkError(f"{path}: field '{section}' must be an object")
            bad = sorted(k for k, v in values.items() if v not in SPLITS)
            if bad:
                raise BenchmarkError(f"{path}: {section} '{bad[0]}' has split {values[bad[0]]!r}; use one of {SPLITS}")
        try:
            seed = int(data.get("seed", 13))
            fractions = tuple(float(x) for x in data.get("fractions", FRACTIONS))
        except (TypeError, ValueError) as exc:
            raise BenchmarkError(f"{path}: 'seed' must be an integer, 'fractions' three numbers ({exc})") from None
        if len(fractions) != 3 or abs(sum(fractions) - 1) > 1e-6:
            raise BenchmarkError(f"{path}: field 'fractions' must be three shares summing to 1")
        queries = data.get("queries", {})
        if not isinstance(queries, dict) or not all(
            isinstance(m, list) and all(isinstance(x, str) for x in m) for m in queries.values()
        ):
            raise BenchmarkError(f"{path}: field 'queries' must map query ids to lists of entity keys")
        return cls(seed, fractions, dict(data["concepts"]), dict(data["documents"]),  # type: ignore[arg-type]
                   {qid: list(members) for qid, members in queries.items()})


def concept_key(entity: Entity) -> str:
    return f"{entity[0]}:{entity[1]}"


def entities_key(record: BenchRecord) -> str:
    """A record's query entities as one string (``"Gene:673|Variant:p|SUB|V|600|E"``)."""
    return "|".join(concept_key(e) for e in record.entities)


def pin_query_ids(
    groups: Mapping[str, tuple[BenchRecord, ...]], saved: Mapping[str, Sequence[str]]
) -> dict[str, tuple[BenchRecord, ...]]:
    """Rename groups to the saved query id that shares most of their records' entities (each saved id once).

    A group sharing nothing with a saved query keeps its computed id (suffixed if a saved id took it).
    """
    owner = {member: qid for qid, members in saved.items() for member in members}
    taken: set[str] = set()
    named: dict[str, tuple[BenchRecord, ...]] = {}
    unnamed: list[tuple[str, tuple[BenchRecord, ...]]] = []
    for qid, records in groups.items():
        votes = Counter(owner[k] for k in {entities_key(r) for r in records} if k in owner)
        best = min((q for q in votes if q not in taken), key=lambda q: (-votes[q], q), default=None)
        if best is None:
            unnamed.append((qid, records))
        else:
            taken.add(best)
            named[best] = records
    for qid, records in unnamed:
        name, n = qid, 1
        while name in named:
            n += 1
            name = f"{qid}#{n}"
        named[name] = records
    return dict(sorted(named.items()))


def hash_split(seed: int, namespace: str, key: str, fractions: Sequence[float] = FRACTIONS) -> str:
    """The split a key falls in: a uniform number from the hash of (seed, namespace, key), cut by fractions."""
    digest = hashlib.sha256(f"{seed}|{namespace}|{key.casefold()}".encode()).digest()
    u = int.from_bytes(digest[:8], "big") / 2**64
    return SPLITS[0] if u < fractions[0] else SPLITS[1] if u < fractions[0] + fractions[1] else SPLITS[2]


@dataclass(frozen=True)
class SplitResult:
    """The records kept in each split, and what the split dropped."""

    kept: Mapping[str, tuple[BenchRecord, ...]]  # split -> records
    dropped: Mapping[str, int]  # "<kind>:<split of the group>" -> records dropped as conflicts


def assign(
    records: Sequence[BenchRecord],
    canonical: Callable[[str, str], str],
    saved: SplitAssignment | None = None,
    seed: int = 13,
    fractions: Sequence[float] = FRACTIONS,
) -> tuple[SplitAssignment, SplitResult]:
    """Place every anchor and document of ``records`` (saved places kept) and split the records.

    Args:
        records: every derived record.
        canonical: (entity type, concept id) → the concept's canonical name (groups are by it).
        saved: a saved assignment to extend (its places never change), or None for a new one.
        seed, fractions: the hash rule's, for a new assignment (a saved one keeps its own).
    """
    assignment = SplitAssignment(saved.seed, saved.fractions, dict(saved.concepts), dict(saved.documents)) \
        if saved is not None else SplitAssignment(seed, tuple(fractions))  # type: ignore[arg-type]
    for pmid in sorted({r.pmid for r in records}):
        if pmid not in assignment.documents:
            assignment.documents[pmid] = hash_split(assignment.seed, "document", pmid, assignment.fractions)
            assignment.new_documents += 1
    groups: dict[tuple[str, str], list[BenchRecord]] = defaultdict(list)
    for record in records:
        entity_type, concept = record.anchor
        groups[(entity_type, canonical(entity_type, concept).casefold())].append(record)
    for group in sorted(groups):
        members = groups[group]
        keys = sorted({concept_key(r.anchor) for r in members})
        placed = [assignment.concepts[k] for k in keys if k in assignment.concepts]
        if placed:
            split = placed[0]
        else:
            tally = Counter(assignment.documents[r.pmid] for r in members)
            split = max(_TIE_ORDER, key=lambda s: (tally[s], -_TIE_ORDER.index(s)))
        for key in keys:
            if key not in assignment.concepts:
                assignment.concepts[key] = split
                assignment.new_concepts += 1
    kept: dict[str, list[BenchRecord]] = {split: [] for split in SPLITS}
    dropped: Counter[str] = Counter()
    for record in records:
        split = assignment.concepts[concept_key(record.anchor)]
        if assignment.documents[record.pmid] == split:
            kept[split].append(record)
        else:
            dropped[f"{record.kind}:{split}"] += 1
    return assignment, SplitResult({s: tuple(v) for s, v in kept.items()}, dict(sorted(dropped.items())))


def split_of_documents(result: SplitResult) -> dict[str, set[str]]:
    """Split → the PMIDs that are positives of its records."""
    return {split: {r.pmid for r in records} for split, records in result.kept.items()}


def check_disjoint(positives: Mapping[str, Iterable[str]]) -> None:
    """Raise when a document is a positive of two splits (a bug, never expected after :func:`assign`)."""
    owner: dict[str, str] = {}
    for split, pmids in positives.items():
        for pmid in pmids:
            if owner.setdefault(pmid, split) != split:
                raise BenchmarkError(f"document {pmid} is a positive of both {owner[pmid]} and {split}")
