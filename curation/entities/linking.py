"""Linking a recognised name to a concept, with a confidence that decides whether to apply it (the linker's serving).

Candidates follow Le et al. (2023, seed 001, §3.1): character n-gram TF-IDF neighbours (the
:class:`~curation.entities.normalise.Normaliser`'s index) united with the dense neighbours of a
name encoder, re-ranked by ``w * dense + (1 - w) * tfidf``; a concept scores its best name. The
encoder is fine-tuned on synonym sets SapBERT-style (seed 002) in the linker's home,
:mod:`curation.learning.linker`; the ranking itself is :class:`~curation.entities.name_scoring.NameScorer`'s.

A wrong link applied silently is worse than no link (a curator trusts what is highlighted), so
:meth:`TrainedLinker.link` applies one only when the top score and its margin over the second
concept clear thresholds chosen on a dev set for precision >= 0.98 (:mod:`curation.learning.linker.calibration`), and
never when the name and the matched name carry different numbers: "PLX4720" is not "PLX4032",
nor "IL-8" "IL-6". Exact, unambiguous dictionary names are applied with confidence 1.0, unless
dev shows a class of them below target (short abbreviations; a multi-species gene dictionary).
:class:`LexiconLinker` is the same without an encoder, so the app links without a trained model.

A trained linker is a folder: the SentenceTransformer (``SentenceTransformer.save``) plus
``manifest.json`` (:class:`LinkerManifest`, written by :func:`write_manifest`, read by :func:`read_manifest`);
:func:`load_linker` refuses anything else by name.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from curation.entities.annotation import Link
from curation.entities.lexicon import Lexicon
from curation.entities.link_calibration import TARGET_PRECISION, DevName, Thresholds, numbers_agree
from curation.entities.name_scoring import NameScorer, Ranked
from curation.errors import CurationError
from curation.files import write_atomic

__all__ = [
    "FORMAT_VERSION", "MANIFEST", "TARGET_PRECISION", "DevName", "LexiconLinker", "LinkerManifest",
    "LinkerUnavailable", "Thresholds", "TrainedLinker", "load_linker", "numbers_agree", "read_manifest",
    "write_manifest",
]  # fmt: skip

FORMAT_VERSION = 1
MANIFEST = "manifest.json"


class LinkerUnavailable(CurationError):
    """A linker folder is missing, malformed, or written by another format version."""


@dataclass(frozen=True)
class LinkerManifest:
    """``manifest.json`` of a trained linker folder."""

    format_version: int
    name: str
    base_model: str
    created: str
    device: str
    train_seconds: float
    weight: float  # w of the combined score, chosen on dev
    thresholds: dict  # kind -> Thresholds fields
    counts: dict  # training names / concepts per source, dev names
    config: dict
    dev: dict = field(default_factory=dict)  # dev figures at the chosen w and thresholds


class LexiconLinker:
    """Exact dictionary names, then TF-IDF candidates; a fuzzy link is applied only under
    ``thresholds`` (by default none is: the candidates are offered instead).

    Args:
        lexicon: the concepts to link to.
        thresholds: kind -> the auto-apply rule, calibrated for this scorer (a kind without one,
            or None: fuzzy links of that kind are never applied).
    """

    name = "lexicon"
    mode = "tfidf"

    def __init__(self, lexicon: Lexicon, thresholds: Mapping[str, Thresholds] | None = None) -> None:
        self.scorer = NameScorer(lexicon)
        self.thresholds = dict(thresholds or {})

    @property
    def lexicon(self) -> Lexicon:
        return self.scorer.lexicon

    def link(self, text: str, kind: str) -> Link:
        """The concept ``text`` names in ``kind``; ``applied`` only when exact or calibrated-safe."""
        return self.link_many([text], kind)[0]

    def link_many(self, texts: Sequence[str], kind: str, k: int = 5) -> list[Link]:
        """:meth:`link` for many names at once (one encoder batch)."""
        clean = [" ".join(t.split()) for t in texts]
        ranked = self.scorer.rank(clean, kind, k=k, mode=self.mode) if clean else []
        return [self._decide(text, kind, found) for text, found in zip(clean, ranked, strict=True)]

    def _decide(self, text: str, kind: str, found: list[Ranked]) -> Link:
        lexicon = self.lexicon
        exact = list(dict.fromkeys(c for _, c in lexicon.lookup(text, kind))) if text else []
        offered = [(c, lexicon.canonical(kind, c) or c, 1.0) for c in exact]
        offered += [(r.concept_id, lexicon.canonical(kind, r.concept_id) or r.concept_id, r.score)
                    for r in found if r.concept_id not in exact]
        candidates = tuple(offered[:5])
        rule = self.thresholds.get(kind, Thresholds())
        if len(exact) == 1:
            applied, confidence = rule.exact_rule(text, lexicon.weight(text, kind))
            return Link(exact[0], candidates[0][1], confidence, applied, candidates)
        if exact:  # a name of several concepts: the curator chooses
            return Link(exact[0], candidates[0][1], round(1.0 / len(exact), 4), False, candidates)
        if not found:
            return Link("", text, 0.0, False, ())
        best = found[0]
        margin = best.score - (found[1].score if len(found) > 1 else 0.0)
        applied = rule.allows(best.score, margin) and numbers_agree(text, best.name)
        return Link(best.concept_id, candidates[0][1], best.score, applied, candidates)


class TrainedLinker(LexiconLinker):
    """:class:`LexiconLinker` plus a fine-tuned name encoder: candidates re-ranked by
    ``w * dense + (1 - w) * tfidf``, applied under dev-calibrated thresholds.

    Args:
        lexicon: the concepts to link to.
        encoder: the fine-tuned SentenceTransformer.
        weight: w, chosen on dev.
        thresholds: kind -> the auto-apply rule chosen on dev.
        name: the linker's name (its folder), stored with annotations it produced.
    """

    mode = "combined"

    def __init__(self, lexicon: Lexicon, encoder, weight: float, thresholds: Mapping[str, Thresholds] | None = None,
                 name: str = "trained") -> None:
        super().__init__(lexicon, thresholds)
        self.scorer = NameScorer(lexicon, encoder, weight)
        self.name = name


def write_manifest(folder: str | Path, manifest: LinkerManifest) -> Path:
    """Write ``manifest.json`` into a linker folder (atomically); its path."""
    path = Path(folder) / MANIFEST
    write_atomic(path, json.dumps(asdict(manifest), indent=2))
    return path


def read_manifest(folder: str | Path) -> LinkerManifest:
    """The folder's manifest, checked.

    Raises:
        LinkerUnavailable: no folder, no or unreadable manifest, a missing field, another format.
    """
    folder = Path(folder)
    path = folder / MANIFEST
    if not folder.is_dir():
        raise LinkerUnavailable(f"{folder}: no such linker folder; train one with `python -m curation train-linker`")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise LinkerUnavailable(f"{path}: missing; is {folder} a linker folder from train-linker?") from None
    except (OSError, ValueError) as exc:
        raise LinkerUnavailable(f"{path}: not readable JSON ({exc}); train the linker again") from None
    if not isinstance(data, dict):
        raise LinkerUnavailable(f"{path}: expected a JSON object")
    version = data.get("format_version")
    if version != FORMAT_VERSION:
        raise LinkerUnavailable(f"{path}: format version {version!r}, this program reads {FORMAT_VERSION}; "
                                "train the linker again with this version")
    names = {f.name for f in fields(LinkerManifest)}
    missing = sorted(n for n in names if n not in data and n != "dev")
    unknown = sorted(set(data) - names)
    if missing or unknown:
        raise LinkerUnavailable(f"{path}: field {(missing or unknown)[0]!r} "
                                f"{'missing' if missing else 'unknown'}; train the linker again")
    try:
        {kind: Thresholds(**rule) for kind, rule in data["thresholds"].items()}
    except (TypeError, AttributeError) as exc:
        raise LinkerUnavailable(f"{path}: field 'thresholds' malformed ({exc})") from None
    return LinkerManifest(**data)


def load_linker(path: str | Path, lexicon: Lexicon, device: str = "") -> TrainedLinker:
    """A :class:`TrainedLinker` over ``lexicon`` from a folder the linker's training wrote
    (:func:`curation.learning.linker.training.train_linker`).

    Raises:
        LinkerUnavailable: the folder, its manifest or its encoder is missing or malformed.
    """
    manifest = read_manifest(path)
    encoder_dir = Path(path) / "encoder"
    if not encoder_dir.is_dir():
        raise LinkerUnavailable(f"{encoder_dir}: the encoder is missing; train the linker again")
    from index.encoder import EncoderConfig, EncoderUnavailable, load_encoder

    try:
        encoder = load_encoder(EncoderConfig(model=str(encoder_dir.resolve()), device=device,
                                             max_seq_length=int(manifest.config.get("max_seq_length", 32))))
    except EncoderUnavailable as exc:
        raise LinkerUnavailable(f"{encoder_dir}: {exc}") from None
    thresholds = {kind: Thresholds(**rule) for kind, rule in manifest.thresholds.items()}
    return TrainedLinker(lexicon, encoder, manifest.weight, thresholds, manifest.name)
