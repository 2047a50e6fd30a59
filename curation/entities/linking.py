"""Linking a recognised name to a concept, with a confidence that decides whether to apply it.

Candidates follow Le et al. (2023, seed 001, §3.1): character n-gram TF-IDF neighbours (the
:class:`~curation.entities.normalise.Normaliser`'s index) united with the dense neighbours of a
name encoder, re-ranked by ``w * dense + (1 - w) * tfidf``; a concept scores its best name. The
encoder is fine-tuned on synonym sets SapBERT-style (seed 002, :mod:`name_encoder`); the ranking itself
is :class:`~curation.entities.name_scoring.NameScorer`'s.

A wrong link applied silently is worse than no link (a curator trusts what is highlighted), so
:meth:`TrainedLinker.link` applies one only when the top score and its margin over the second
concept clear thresholds chosen on a dev set for precision >= 0.98 (:func:`calibrate`), and
never when the name and the matched name carry different numbers: "PLX4720" is not "PLX4032",
nor "IL-8" "IL-6". Exact, unambiguous dictionary names are applied with confidence 1.0, unless
dev shows a class of them below target (short abbreviations; a multi-species gene dictionary).
:class:`LexiconLinker` is the same without an encoder, so the app links without a trained model.

A trained linker is a folder: the SentenceTransformer (``SentenceTransformer.save``) plus
``manifest.json`` (:class:`LinkerManifest`); :func:`load_linker` refuses anything else by name.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from datetime import UTC, datetime
from pathlib import Path

from curation.entities.annotation import Link
from curation.entities.lexicon import Lexicon
from curation.entities.link_calibration import (
    TARGET_PRECISION,
    DevName,
    Thresholds,
    calibrate,
    choose_thresholds,
    numbers_agree,
)
from curation.entities.name_encoder import NameEncoderConfig, TrainingReport, fine_tune
from curation.entities.name_scoring import NameScorer, Ranked
from curation.errors import CurationError
from curation.files import write_atomic

__all__ = [
    "FORMAT_VERSION", "TARGET_PRECISION", "DevName", "LexiconLinker", "LinkerManifest", "LinkerUnavailable",
    "Thresholds", "TrainedLinker", "calibrate", "choose_thresholds", "load_linker", "numbers_agree", "read_manifest",
    "recalibrate", "train_linker",
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


def train_linker(
    sets: Mapping[str, Sequence[str]],
    kinds: Mapping[str, str],
    lexicon: Lexicon,
    dev: Sequence[DevName],
    out: str | Path,
    config: NameEncoderConfig | None = None,
    base_model: str = "",
    counts: Mapping[str, int] | None = None,
    progress=None,
) -> tuple[TrainedLinker, LinkerManifest]:
    """Fine-tune the name encoder, calibrate it on dev, and save it under ``out``.

    Args:
        sets: concept label -> names to train on (labels unique across kinds).
        kinds: concept label -> kind.
        lexicon: the dictionary dev names are linked into (the same names as training, never dev's).
        dev: dev mentions for w and the thresholds.
        out: the linker folder (created; an existing one is replaced).
        config: fine-tuning hyper-parameters.
        base_model: a sentence-transformers name or folder ("" = the packaged MiniLM).
        counts: training data counts recorded in the manifest.
        progress: ``progress(step, total, loss)`` during fine-tuning.
    """
    from index.encoder import EncoderConfig, load_encoder, model_name

    config = config or NameEncoderConfig()
    encoder = load_encoder(EncoderConfig(model=base_model, device=config.loop.device,
                                         max_seq_length=config.max_seq_length))
    base = model_name(encoder)
    report: TrainingReport = fine_tune(encoder, sets, kinds, config, progress)
    out = Path(out)
    linker = TrainedLinker(lexicon, encoder, 0.5, name=out.name)
    weight, thresholds, figures = calibrate(linker, dev)
    linker.scorer.weight = weight
    linker.thresholds = thresholds
    manifest = LinkerManifest(
        format_version=FORMAT_VERSION, name=out.name, base_model=base,
        created=datetime.now(UTC).isoformat(timespec="seconds"), device=report.device,
        train_seconds=report.seconds, weight=weight,
        thresholds={kind: asdict(rule) for kind, rule in thresholds.items()},
        counts={**dict(counts or {}), "train_concepts": report.concepts, "train_names": report.names},
        config={**config.recorded(), "steps": report.steps, "final_loss": report.final_loss,
                "mined_pairs_per_batch": report.mined_pairs},
        dev=figures,
    )
    out.mkdir(parents=True, exist_ok=True)
    encoder.save(str(out / "encoder"))
    write_atomic(out / MANIFEST, json.dumps(asdict(manifest), indent=2))
    return linker, manifest


def recalibrate(folder: str | Path, lexicon: Lexicon, dev: Sequence[DevName], device: str = "") -> TrainedLinker:
    """Choose w and the thresholds again for a saved linker and rewrite its manifest.

    For a new dev set or dictionary, or a changed apply rule, without retraining: the encoder
    and the training record are kept.
    """
    folder = Path(folder)
    manifest = read_manifest(folder)
    linker = load_linker(folder, lexicon, device)
    weight, thresholds, figures = calibrate(linker, dev)
    linker.scorer.weight, linker.thresholds = weight, thresholds
    rules = {kind: asdict(rule) for kind, rule in thresholds.items()}
    updated = replace(manifest, weight=weight, thresholds=rules, dev=figures)
    write_atomic(folder / MANIFEST, json.dumps(asdict(updated), indent=2))
    return linker


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
    """A :class:`TrainedLinker` over ``lexicon`` from a folder :func:`train_linker` wrote.

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
