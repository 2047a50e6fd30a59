"""Margin classes: which margin a (query, document) pair gets in EDEL's layered loss.

Positives are classed by which of the record's entities the abstract mentions (the text-match
pattern g); negatives from other KB records by which entities they share with the positive
record (the KB-match pattern h) and by g over their own abstract; BM25 and random negatives
have one class each. The tables are configuration (``margins.toml`` beside this file, or a
user file with the same layout), not code. A schema without a table gets one derived from how
much of the relation matches, the answer entity weighted highest.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from curation.errors import SchemaError
from curation.schemas import RelationSchema, read_toml

BUILTIN_TABLES = Path(__file__).with_name("margins.toml")
Pattern = tuple[bool, ...]


@dataclass(frozen=True)
class MarginClass:
    """One class of training pairs sharing a margin.

    Attributes:
        name: "pos-1" … for positives, "neg-2" …, "bm25", "random" for negatives.
        margin: cosine-distance margin in [0, 2].
        positive: label of the pairs (True: pull within the margin; False: push beyond it).
    """

    name: str
    margin: float
    positive: bool


def _parse(pattern: str, width: int, where: str) -> tuple[int | None, ...]:
    if len(pattern) != width or any(c not in "01-" for c in pattern):
        raise SchemaError(f"{where}: pattern '{pattern}' must have {width} characters of 0, 1 or -")
    return tuple(None if c == "-" else c == "1" for c in pattern)


def _fits(pattern: tuple[int | None, ...], values: Pattern) -> bool:
    return all(p is None or p == v for p, v in zip(pattern, values, strict=True))


@dataclass(frozen=True)
class MarginTable:
    """The margin classes of one schema."""

    schema: str
    width: int
    positives: tuple[tuple[MarginClass, tuple[tuple[int | None, ...], ...]], ...]
    negatives: tuple[tuple[MarginClass, tuple[tuple[int | None, ...], ...], tuple[int | None, ...]], ...]
    bm25: MarginClass
    random: MarginClass

    def positive_class(self, text_match: Pattern) -> MarginClass:
        """Class of a KB positive whose abstract mentions the entities flagged in ``text_match``."""
        self._check(text_match)
        for margin_class, patterns in self.positives:
            if any(_fits(p, text_match) for p in patterns):
                return margin_class
        raise SchemaError(f"margin table of {self.schema} has no positive class for pattern {_show(text_match)}")

    def negative_class(self, kb_match: Pattern, own_text_match: Pattern) -> MarginClass | None:
        """Class of another record's abstract as a negative, or None when no class takes it.

        Entries are tried in the table's order and the first that fits both patterns wins, so an entry
        with looser patterns placed after stricter ones takes only what those leave.

        Args:
            kb_match: h per entity type between the other record and the positive record.
            own_text_match: g of the other record's entities in its own abstract.
        """
        self._check(kb_match)
        self._check(own_text_match)
        for margin_class, patterns, text in self.negatives:
            if any(_fits(p, kb_match) for p in patterns) and _fits(text, own_text_match):
                return margin_class
        return None

    def classes(self) -> list[MarginClass]:
        out = [c for c, _ in self.positives] + [c for c, _, _ in self.negatives] + [self.bm25, self.random]
        return list(dict.fromkeys(out))

    def _check(self, values: Pattern) -> None:
        if len(values) != self.width:
            raise ValueError(f"pattern {values} has {len(values)} entries; schema {self.schema} has {self.width}")


def _show(values: Pattern) -> str:
    return "".join("1" if v else "0" for v in values)


def table_from_dict(schema: RelationSchema, data: dict, where: str) -> MarginTable:
    width = len(schema.entity_types)
    positives, negatives = [], []
    try:
        for entry in data.get("positive", []):
            margin_class = MarginClass(f"pos-{entry['class']}", float(entry["margin"]), True)
            patterns = tuple(_parse(p, width, where) for p in entry["text_match"])
            positives.append((margin_class, patterns))
        for entry in data.get("negative", []):
            margin_class = MarginClass(f"neg-{entry['class']}", float(entry["margin"]), False)
            patterns = tuple(_parse(p, width, where) for p in entry["kb_match"])
            text = _parse(entry.get("text_match", "1" * width), width, where)
            negatives.append((margin_class, patterns, text))
        bm25 = MarginClass("bm25", float(data.get("bm25_margin", 1.0)), False)
        random = MarginClass("random", float(data.get("random_margin", 1.2)), False)
    except KeyError as exc:
        raise SchemaError(f"{where}: a margin class lacks the field {exc}") from None
    seen: dict[str, float] = {}
    for margin_class in [c for c, _ in positives] + [c for c, _, _ in negatives] + [bm25, random]:
        if not 0.0 <= margin_class.margin <= 2.0:
            raise SchemaError(f"{where}: margin {margin_class.margin} of {margin_class.name} is outside [0, 2]")
        # One class may span several entries (rows with other text-match rules), never two margins.
        if seen.setdefault(margin_class.name, margin_class.margin) != margin_class.margin:
            raise SchemaError(f"{where}: class {margin_class.name} has two margins, {seen[margin_class.name]} "
                              f"and {margin_class.margin}; give every entry of a class the same margin")
    if not positives:
        raise SchemaError(f"{where}: no positive classes")
    return MarginTable(schema.name, width, tuple(positives), tuple(negatives), bm25, random)


def derived_table(schema: RelationSchema) -> MarginTable:
    """A default table for a schema without one.

    Positives: coverage = matched weight / total weight, with the answer weighing 1.5 and each
    query entity 1; margin 0.0 at full coverage, 0.2 from 0.7, 0.6 from 0.5, 1.0 above 0, 1.2
    at none (this reproduces the PO table exactly). Negatives: same query entities without an
    answer 0.6; sharing some entity 0.8; sharing none 1.0; BM25 1.0; random 1.2.
    """
    types = schema.entity_types
    answer = types.index(schema.answer)
    weights = [1.5 if i == answer else 1.0 for i in range(len(types))]
    total = sum(weights)
    buckets: dict[float, list[str]] = {}
    for bits in range(2 ** len(types)):
        values = [(bits >> (len(types) - 1 - i)) & 1 for i in range(len(types))]
        coverage = sum(w for w, v in zip(weights, values, strict=True) if v) / total
        margin = 0.0 if coverage == 1 else 0.2 if coverage >= 0.7 else 0.6 if coverage >= 0.5 else (
            1.0 if coverage > 0 else 1.2)
        buckets.setdefault(margin, []).append("".join(map(str, values)))
    positive = [{"class": i + 1, "margin": m, "text_match": p} for i, (m, p) in enumerate(sorted(buckets.items()))]
    query_all = "".join("0" if i == answer else "1" for i in range(len(types)))
    some = []
    for bits in range(1, 2 ** len(types)):
        pattern = "".join(str((bits >> (len(types) - 1 - i)) & 1) for i in range(len(types)))
        if pattern != query_all and not (all(c == "1" for c in pattern)):
            some.append(pattern)
    negative = [
        {"class": 3, "margin": 0.6, "kb_match": [query_all]},
        {"class": 4, "margin": 0.8, "kb_match": some},
        {"class": 5, "margin": 1.0, "kb_match": ["0" * len(types)]},
    ]
    data = {"positive": positive, "negative": negative, "bm25_margin": 1.0, "random_margin": 1.2}
    return table_from_dict(schema, data, where=f"derived margins of {schema.name}")


def margin_table(schema: RelationSchema, path: str | Path | None = None) -> MarginTable:
    """The margin table of a schema: from ``path`` (a user TOML) if it has one, else built in, else derived."""
    for source in ([Path(path)] if path else []) + [BUILTIN_TABLES]:
        tables = read_toml(source, "margin table")
        if schema.name in tables:
            return table_from_dict(schema, tables[schema.name], where=f"{source} [{schema.name}]")
    return derived_table(schema)


def pattern(flags: Sequence[bool]) -> Pattern:
    return tuple(bool(f) for f in flags)
