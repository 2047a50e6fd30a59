"""The direction a sentence gives a drug's relation: response or resistance (a gene or variant and a drug), treats
or induces (a disease and a drug), so that a suggestion says "responds to" or "resistance", and a Disease →
Treatment query leaves out what causes the disease.

Two heads (:data:`HEADS`), each a logistic regression over the words and word pairs of the sentence with the
query's mentions written ``@a`` and the drug's ``@b``, kept as JSON (token → weight, no pickle). Weak
supervision the data folder already has (:func:`direction_examples`):

* ``therapy``: CIViC's Predictive evidence statements that support Sensitivity/Response (responds) or Resistance,
  the statement's gene and variant masked as ``@a`` and its therapies as ``@b``;
* ``disease``: BioRED Train's chemical–disease relations (Negative_Correlation: treats; Positive_Correlation:
  induces), BC5CDR Train's chemical-induced disease relations (induces), each sentence holding both concepts;
  and CIViC's Sensitivity/Response statements of a therapy (treats), the disease name masked where it is written.

Statements of CIViC records whose PMIDs are in a Dev or Test split of BioRED or BC5CDR are held out, and so are
those corpora's Dev and Test documents (``held_out``). The disease head says "induces" from its own threshold,
chosen on the corpora's Dev sentences for the best balanced accuracy (their treats are few beside BC5CDR's
induces: at 0.5 it called most Dev "treats" sentences "induces"). The therapy head keeps 0.5: its dev is CIViC's
curated statements, not abstract text, and the threshold chosen there (0.2) turned the sample's EGFR L858R
erlotinib sentences into "resistance".
"""

from __future__ import annotations

import csv
import json
import math
import re
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from curation.files import write_atomic
from curation.relations.pairs import RelationError, concept_ids, sentences

DIRECTION_FILE = "direction.json"
FORMAT_VERSION = 1
#: head → (label of class 0, label of class 1)
HEADS = {"therapy": ("responds to", "resistance"), "disease": ("treats", "induces")}
CIVIC_FILE = "civic/civic_evidence_2026-05.tsv"
DEV_SHARE = 5  # one CIViC PMID in DEV_SHARE is the therapy head's dev (by a hash of the PMID)
_TOKEN = re.compile(r"@[ab]|[a-z][a-z0-9\-]*|\d+")
_CIVIC_THERAPY = re.compile(r"\s*,\s*")


def tokens(text: str) -> list[str]:
    """The words and adjacent word pairs of a masked sentence (lower-cased)."""
    words = _TOKEN.findall(text.lower())
    return words + [f"{a} {b}" for a, b in zip(words, words[1:], strict=False)]


def mask(text: str, query: Iterable[tuple[int, int]], drug: Iterable[tuple[int, int]]) -> str:
    """``text`` with the query's spans written ``@a`` and the drug's ``@b`` (offsets into ``text``)."""
    spans = sorted({(s, e, "@a") for s, e in query} | {(s, e, "@b") for s, e in drug})
    out, at = [], 0
    for start, end, tag in spans:
        if start < at:
            continue  # an overlapping span: the first one wins
        out += [text[at:start], f" {tag} "]
        at = end
    return "".join(out + [text[at:]])


def head_of(query_kinds: Iterable[str], answer_kind: str) -> str | None:
    """The head that reads a pair of these kinds: gene or variant with a chemical → therapy; disease with a
    chemical → disease; None for other pairs."""
    kinds = {*query_kinds, answer_kind}
    if "chemical" not in kinds:
        return None
    if kinds & {"gene", "variant"}:
        return "therapy"
    return "disease" if "disease" in kinds else None


def wanted_label(schema_name: str, answer: str, head: str | None) -> str | None:
    """The direction a schema's answer must have (None: any): a Treatment of a disease treats it; a disease a
    chemical induces (the Chemical-Disease schema) is induced."""
    if head == "disease" and answer == "Treatment":
        return "treats"
    if head == "disease" and schema_name == "Chemical-Disease":
        return "induces"
    return None


@dataclass(frozen=True)
class Head:
    """One head's logistic regression: token → weight, the intercept, and its labels (class 0, class 1)."""

    labels: tuple[str, str]
    weights: Mapping[str, float]
    intercept: float
    threshold: float = 0.5  # the probability at which the second label is said (chosen on dev)

    def label(self, probability: float) -> str:
        return self.labels[int(probability >= self.threshold)]

    def probability(self, masked: str) -> float:
        """P(class 1 | the masked sentence)."""
        z = self.intercept + sum(self.weights.get(t, 0.0) for t in set(tokens(masked)))
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


@dataclass(frozen=True)
class Direction:
    """A sentence's direction: its label and the probability of the head's class 1."""

    label: str
    probability: float


@dataclass(frozen=True)
class DirectionModel:
    """The heads of :data:`HEADS` that were trained, and the figures of their training."""

    heads: Mapping[str, Head]
    figures: Mapping[str, object] = field(default_factory=dict)

    def direction(self, head: str, masked: str) -> Direction | None:
        """The direction ``head`` reads in a masked sentence (None: that head was not trained)."""
        found = self.heads.get(head)
        if found is None:
            return None
        p = found.probability(masked)
        return Direction(found.label(p), p)

    def save(self, path: Path) -> Path:
        payload = {"format_version": FORMAT_VERSION, "figures": dict(self.figures),
                   "heads": {name: {"labels": list(h.labels), "intercept": h.intercept, "threshold": h.threshold,
                                    "weights": {t: round(w, 6) for t, w in sorted(h.weights.items())}}
                             for name, h in self.heads.items()}}
        return write_atomic(path, json.dumps(payload))

    @classmethod
    def load(cls, path: Path) -> DirectionModel:
        """Raises: RelationError naming the file when it cannot be read or is of another format."""
        try:
            payload = json.loads(Path(path).read_text())
        except (OSError, ValueError) as exc:
            raise RelationError(f"direction model {path} cannot be read ({exc})") from None
        if payload.get("format_version") != FORMAT_VERSION:
            raise RelationError(f"direction model {path} is of another format; train the relation scorer again")
        heads = {name: Head(tuple(h["labels"]), dict(h["weights"]), float(h["intercept"]), float(h["threshold"]))
                 for name, h in payload["heads"].items()}
        return cls(heads, payload.get("figures", {}))


@dataclass(frozen=True)
class Example:
    """One masked sentence, its head, its class (0 or 1), where it comes from, and its PMID."""

    head: str
    text: str
    label: int
    source: str
    pmid: str


def civic_examples(path: Path, held_out: Iterable[str] = ()) -> list[Example]:
    """CIViC's supporting Predictive statements of a therapy: therapy head (Sensitivity/Response 0, Resistance 1)
    and, for Sensitivity/Response, the disease head's "treats" (0); statements citing a held-out PMID left out."""
    held = set(held_out)
    out = []
    with open(path, newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            significance = row.get("significance", "")
            if (row.get("evidence_type") != "Predictive" or row.get("evidence_direction") != "Supports"
                    or not row.get("therapies") or row.get("citation_id", "") in held
                    or significance not in ("Sensitivity/Response", "Resistance")):
                continue
            text = row.get("evidence_statement", "")
            gene, _, variant = row.get("molecular_profile", "").partition(" ")
            query = _find(text, [gene, variant])
            drug = _find(text, _CIVIC_THERAPY.split(row["therapies"]))
            if not drug:
                continue
            label = int(significance == "Resistance")
            out.append(Example("therapy", mask(text, query, drug), label, "civic", row.get("citation_id", "")))
            if label == 0 and (disease := _find(text, [row.get("disease", "")])):
                out.append(Example("disease", mask(text, disease, drug), 0, "civic", row.get("citation_id", "")))
    return out


def _find(text: str, names: Sequence[str]) -> list[tuple[int, int]]:
    """Where ``names`` are written in ``text`` (whole words, any case)."""
    spans = []
    for name in names:
        name = name.strip()
        if len(name) > 1:
            spans += [m.span() for m in re.finditer(rf"(?<!\w){re.escape(name)}(?!\w)", text, re.IGNORECASE)]
    return spans


def corpus_examples(documents: Iterable) -> list[Example]:
    """The disease head's sentences of the corpora's chemical–disease relations: BioRED's Negative_Correlation
    (treats, 0) and Positive_Correlation (induces, 1), BC5CDR's CID (induces, 1); every sentence holding a
    mention of both concepts."""
    out = []
    for d in documents:
        kinds: dict[str, str] = {}
        spans: dict[str, list[tuple[int, int]]] = {}
        for m in d.mentions:
            kind = {"ChemicalEntity": "chemical", "Chemical": "chemical", "DiseaseOrPhenotypicFeature": "disease",
                    "Disease": "disease"}.get(m.type)
            for cid in concept_ids(m) if kind else ():
                kinds[cid] = kind
                spans.setdefault(cid, []).append((m.start, m.end))
        for r in d.relations:
            label = {"Negative_Correlation": 0, "Positive_Correlation": 1, "CID": 1}.get(r.type)
            pair = {kinds.get(r.concept1): r.concept1, kinds.get(r.concept2): r.concept2}
            if label is None or set(pair) != {"chemical", "disease"}:
                continue
            chemical, disease = spans[pair["chemical"]], spans[pair["disease"]]
            for start, end in sentences(d.text):
                drug = [(s - start, e - start) for s, e in chemical if start <= s < end]
                query = [(s - start, e - start) for s, e in disease if start <= s < end]
                if drug and query:
                    source = "bc5cdr" if r.type == "CID" else "biored"
                    out.append(Example("disease", mask(d.text[start:end], query, drug), label, source, d.pmid))
    return out


def pair_direction(head: Head, text: str, query: Sequence[tuple[int, int]], drug: Sequence[tuple[int, int]]
                   ) -> float | None:
    """The head's mean probability of its second label over the sentences of ``text`` that hold a span of both
    sides (None: no sentence holds both); compare it with ``head.threshold``."""
    read = []
    for start, end in sentences(text):
        a = [(s - start, e - start) for s, e in query if start <= s < end]
        b = [(s - start, e - start) for s, e in drug if start <= s < end]
        if a and b:
            read.append(head.probability(mask(text[start:end], a, b)))
    return sum(read) / len(read) if read else None


def fit_head(examples: Sequence[Example], head: str, c: float = 1.0) -> Head:
    """A head fitted on its examples (binary token presence, tokens in two examples or more, balanced classes).

    Raises:
        RelationError: the examples lack one of the two classes.
    """
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression

    mine = [e for e in examples if e.head == head]
    labels = [e.label for e in mine]
    if len(set(labels)) < 2:
        raise RelationError(f"the {head} direction needs examples of both {' and '.join(HEADS[head])}")
    vectoriser = CountVectorizer(analyzer=tokens, binary=True, min_df=2)
    x = vectoriser.fit_transform([e.text for e in mine])
    model = LogisticRegression(C=c, class_weight="balanced", max_iter=2000, solver="liblinear").fit(x, labels)
    weights = {t: float(w) for t, w in zip(vectoriser.get_feature_names_out(), model.coef_[0], strict=True)
               if abs(w) > 1e-6}
    return Head(HEADS[head], weights, float(model.intercept_[0]))


def evaluate(head: Head, examples: Sequence[Example]) -> dict[str, float]:
    """Accuracy and each class's F1 of a head on its examples."""
    gold = [e.label for e in examples]
    predicted = [int(head.probability(e.text) >= head.threshold) for e in examples]
    out: dict[str, float] = {"examples": float(len(gold)),
                             "accuracy": round(sum(g == p for g, p in zip(gold, predicted, strict=True))
                                               / max(1, len(gold)), 4)}
    for cls, label in enumerate(head.labels):
        tp = sum(g == p == cls for g, p in zip(gold, predicted, strict=True))
        p_n, g_n = predicted.count(cls), gold.count(cls)
        precision, recall = tp / p_n if p_n else 0.0, tp / g_n if g_n else 0.0
        out[f"f1_{label.replace(' ', '_')}"] = round(2 * precision * recall / (precision + recall)
                                                     if precision + recall else 0.0, 4)
    return out


def balanced_threshold(head: Head, examples: Sequence[Example]) -> float:
    """The threshold (0.05 to 0.95 by 0.05) with the best mean recall of the two labels on ``examples``."""
    scored = [(head.probability(e.text), e.label) for e in examples]
    counts = [sum(y == cls for _, y in scored) for cls in (0, 1)]
    if not all(counts):
        return 0.5

    def balanced(t: float) -> float:
        return (sum(p < t for p, y in scored if y == 0) / counts[0] + sum(p >= t for p, y in scored if y == 1)
                / counts[1]) / 2

    return max((round(0.05 * i, 2) for i in range(1, 20)), key=lambda t: (balanced(t), -abs(t - 0.5)))


def train_direction(data_dir: Path, held_out: Iterable[str], train_documents: Iterable,
                    dev_documents: Iterable = ()) -> DirectionModel:
    """Both heads fitted on every example (:func:`civic_examples` without ``held_out`` PMIDs,
    :func:`corpus_examples` of ``train_documents``, the corpora's Train documents), with dev figures: the therapy
    head fitted without one CIViC PMID in :data:`DEV_SHARE` and scored on it; the disease head scored on
    ``dev_documents`` (the corpora's Dev documents) when given, the disease head's threshold chosen there
    (:func:`balanced_threshold`).

    Raises:
        RelationError: no CIViC export and no corpus relation to learn a head from.
    """
    held = set(held_out)
    path = Path(data_dir) / CIVIC_FILE
    examples = (civic_examples(path, held) if path.is_file() else []) + corpus_examples(
        d for d in train_documents if d.pmid not in held)
    heads: dict[str, Head] = {}
    figures: dict = {"held_out_pmids": len(held), "civic_file": CIVIC_FILE if path.is_file() else None}
    for name in HEADS:
        mine = [e for e in examples if e.head == name]
        if len({e.label for e in mine}) < 2:
            continue
        heads[name] = fit_head(mine, name)
        counts = {label: sum(e.label == cls for e in mine) for cls, label in enumerate(HEADS[name])}
        figures[name] = {"examples": len(mine), "per_label": counts,
                         "per_source": {s: sum(e.source == s for e in mine) for s in sorted({e.source for e in mine})}}
    if "therapy" in heads:  # a fit without one CIViC PMID in DEV_SHARE, scored on those (threshold 0.5)
        therapy = [e for e in examples if e.head == "therapy"]
        dev = [e for e in therapy if zlib.crc32(e.pmid.encode()) % DEV_SHARE == 0]
        held = fit_head([e for e in therapy if zlib.crc32(e.pmid.encode()) % DEV_SHARE != 0], "therapy")
        figures["therapy"]["dev_civic_pmid_split"] = {"threshold": held.threshold, **evaluate(held, dev),
                                                      "balanced_threshold_not_used": balanced_threshold(held, dev)}
    dev = corpus_examples(dev_documents)
    if "disease" in heads and dev:
        heads["disease"] = replace(heads["disease"], threshold=balanced_threshold(heads["disease"], dev))
        figures["disease"]["dev_corpora"] = {"threshold": heads["disease"].threshold,
                                             **evaluate(heads["disease"], dev)}
    if not heads:
        raise RelationError(f"{data_dir}: no CIViC export ({CIVIC_FILE}) and no chemical–disease relation to learn "
                            "a direction from")
    return DirectionModel(heads, figures)
