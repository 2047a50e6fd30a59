"""A trained named-entity recogniser: genes, variants, chemicals, diseases and cell lines.

No scispaCy model or UMLS can be installed offline, so the recogniser is trained here, with
spaCy's own training (``spacy train`` on a config written by :func:`training_config`), on the
real annotated corpora: BioRED Train (all five types) and BC5CDR Train (chemicals and diseases
only). Model selection (spaCy keeps the best checkpoint by entity F1) is on BioRED Dev; no
document of BioRED Dev/Test or BC5CDR Dev/Test is trained on.

BC5CDR does not annotate genes or variants, so in its documents the tokens of a gene or variant
that the dictionary matcher finds are marked *missing* (neither entity nor "outside"): the model
is not taught that "BRCA1" is not an entity there.

Tokens: spaCy's English tokenizer also splits on hyphens, slashes, brackets and a few other
marks inside words ("BRAF(V600E)-mutant" → BRAF ( V600E ) - mutant); 99.6% of the gold mentions
of BioRED Train and BC5CDR Test then fall on token boundaries (the rest are lost to training).

A trained recogniser is a folder: ``model/`` (the spaCy pipeline) and ``manifest.json``
(:class:`RecogniserManifest`). :func:`load_recogniser` refuses a folder of another format or
spaCy version with a :class:`RecogniserError` that says what to do.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from curation.entities.recogniser_corpus import LABELS, CorpusPart, RecogniserError
from curation.files import staged_folder, write_atomic

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc

    from curation.entities.transformer_recogniser import TransformerManifest, TransformerRecogniser

FORMAT = "recogniser/1"
KINDS = tuple(sorted({label.lower() for label in LABELS.values()}))
#: Labels of installed scispaCy NER models (en_ner_bc5cdr_md, en_ner_jnlpba_md, en_ner_bionlp13cg_md, ...)
#: -> our kinds; a label not listed here is dropped.
FOREIGN_LABELS: dict[str, str] = {
    "CHEMICAL": "chemical", "SIMPLE_CHEMICAL": "chemical", "DISEASE": "disease", "CANCER": "disease",
    "GENE_OR_GENE_PRODUCT": "gene", "PROTEIN": "gene", "DNA": "gene", "RNA": "gene", "CELL_LINE": "cellline",
}  # fmt: skip
#: The types a corpus file annotates; tokens of the others are "missing" in its documents.
PARTIAL_TYPES = {"bc5cdr": ("CHEMICAL", "DISEASE")}

_INFIXES = r"[-/()\[\]+:;,=_~]"
_AFFIXES = r"[-/+]"


def _tokenizer_factory():
    def make(nlp):
        import spacy
        from spacy.util import compile_infix_regex, compile_prefix_regex, compile_suffix_regex

        tokenizer = spacy.tokenizer.Tokenizer(
            nlp.vocab,
            rules=nlp.Defaults.tokenizer_exceptions,
            prefix_search=compile_prefix_regex([*nlp.Defaults.prefixes, _AFFIXES]).search,
            suffix_search=compile_suffix_regex([*nlp.Defaults.suffixes, _AFFIXES, r"(?<=[A-Za-z0-9])\."]).search,
            infix_finditer=compile_infix_regex([*nlp.Defaults.infixes, _INFIXES]).finditer,
            token_match=nlp.Defaults.token_match,
            url_match=nlp.Defaults.url_match,
        )
        return tokenizer

    return make


def register() -> None:
    """Register the biomedical tokenizer with spaCy (needed to train and to load a recogniser)."""
    import spacy

    if "curation.biomed_tokenizer.v1" not in spacy.registry.tokenizers:
        spacy.registry.tokenizers("curation.biomed_tokenizer.v1", func=_tokenizer_factory)


def blank() -> Language:
    """An empty English pipeline with the recogniser's tokenizer."""
    import spacy

    register()
    nlp = spacy.blank("en")
    nlp.tokenizer = _tokenizer_factory()(nlp)
    return nlp


# --- training data ---------------------------------------------------------------------



def to_spacy_docs(
    nlp: Language,
    part: CorpusPart,
    unlabelled: Callable[[str], Iterable[tuple[int, int]]] | None = None,
) -> tuple[list[Doc], dict[str, int]]:
    """Documents as spaCy Docs with gold entities; counts of what could not be used.

    Args:
        nlp: a pipeline with the recogniser's tokenizer (:func:`blank`).
        part: the documents and the labels their corpus annotates.
        unlabelled: for a partially annotated corpus, (start, end) spans of the other types in a
            text (e.g. the dictionary's genes and variants); their tokens are set to missing.

    Overlapping gold mentions keep the longest; mentions that do not fall on token boundaries
    are counted in ``misaligned``.
    """
    from spacy.util import filter_spans

    counts = {"documents": 0, "mentions": 0, "misaligned": 0, "overlapping": 0, "missing_tokens": 0}
    docs = []
    for document in part.documents:
        doc = nlp.make_doc(document.text)
        spans = []
        for mention in document.mentions:
            label = LABELS.get(mention.type)
            if label is None or (part.labels is not None and label not in part.labels):
                continue
            counts["mentions"] += 1
            span = doc.char_span(mention.start, mention.end, label=label)
            if span is None:
                counts["misaligned"] += 1
                continue
            spans.append(span)
        kept = filter_spans(spans)
        counts["overlapping"] += len(spans) - len(kept)
        missing = []
        if part.labels is not None and unlabelled is not None:
            taken = {i for s in kept for i in range(s.start, s.end)}
            for start, end in unlabelled(document.text):
                span = doc.char_span(start, end, alignment_mode="expand")
                if span is not None and not taken.intersection(range(span.start, span.end)):
                    missing.append(span)
            missing = filter_spans(missing)  # a dictionary's name inside a dropped mention: one missing span
        doc.set_ents(kept, missing=missing, default="outside")
        counts["missing_tokens"] += sum(len(s) for s in missing)
        counts["documents"] += 1
        docs.append(doc)
    return docs, counts


def training_config(width: int = 128, depth: int = 4, max_epochs: int = 30, patience: int = 1600) -> str:
    """spaCy's CPU "efficiency" NER config with the biomedical tokenizer and larger hash tables."""
    from spacy.cli.init_config import init_config

    config = init_config(lang="en", pipeline=["ner"], optimize="efficiency", gpu=False)
    config["nlp"]["tokenizer"] = {"@tokenizers": "curation.biomed_tokenizer.v1"}
    config["components"]["tok2vec"]["model"]["encode"]["width"] = width
    config["components"]["tok2vec"]["model"]["encode"]["depth"] = depth
    config["components"]["tok2vec"]["model"]["embed"]["rows"] = [20000, 5000, 10000, 2500]
    config["training"]["max_epochs"] = max_epochs
    config["training"]["max_steps"] = 0
    config["training"]["patience"] = patience
    config["training"]["eval_frequency"] = 200
    return config.to_str()


# --- the trained folder -----------------------------------------------------------------


@dataclass(frozen=True)
class RecogniserManifest:
    """What a recogniser folder holds and how it was made."""

    name: str
    format: str
    spacy_version: str
    labels: tuple[str, ...]
    created: str
    trained_on: dict[str, int]
    selected_on: str
    dev_scores: dict[str, float] = field(default_factory=dict)
    settings: dict[str, float | int | str] = field(default_factory=dict)
    train_seconds: float = 0.0
    device: str = "cpu"


def train_recogniser(
    train: Sequence[CorpusPart],
    dev: CorpusPart,
    out: Path,
    unlabelled: Callable[[str], Iterable[tuple[int, int]]] | None = None,
    width: int = 128,
    depth: int = 4,
    max_epochs: int = 30,
    patience: int = 1600,
    use_gpu: int = -1,
    name: str | None = None,
    overrides: dict[str, object] | None = None,
) -> RecogniserManifest:
    """Train a recogniser with ``spacy train`` and publish it at ``out`` (staged, then renamed).

    ``overrides`` are extra spaCy config overrides, e.g. ``{"training.logger": {...}}`` (the
    background job's progress logger, which also stops training when the job is cancelled).

    Raises:
        RecogniserError: no training documents or mentions, or an empty dev set; ``out``
            is left as it was.
    """
    import spacy
    from spacy.cli.train import train as spacy_train
    from spacy.tokens import DocBin

    register()
    nlp = blank()
    counts: dict[str, int] = {}
    train_docs = []
    for part in train:
        docs, c = to_spacy_docs(nlp, part, unlabelled)
        train_docs += docs
        for key, value in c.items():
            counts[f"{part.name}.{key}"] = value
    if not train_docs or not any(d.ents for d in train_docs):
        raise RecogniserError("the training corpus has no documents with entity mentions of a known type "
                              f"({', '.join(sorted(set(LABELS)))}); nothing was trained")
    dev_docs, c = to_spacy_docs(nlp, dev)
    if not dev_docs:
        raise RecogniserError(f"the dev set {dev.name!r} has no documents; nothing was trained")
    counts.update({f"{dev.name}.{k}": v for k, v in c.items()})
    out = Path(out)
    with staged_folder(out) as stage:
        DocBin(docs=train_docs).to_disk(stage / "train.spacy")
        DocBin(docs=dev_docs).to_disk(stage / "dev.spacy")
        (stage / "config.cfg").write_text(training_config(width, depth, max_epochs, patience), encoding="utf-8")
        started = time.perf_counter()
        spacy_train(
            stage / "config.cfg",
            stage / "training",
            use_gpu=use_gpu,
            overrides={"paths.train": str(stage / "train.spacy"), "paths.dev": str(stage / "dev.spacy"),
                       **(overrides or {})},
        )
        seconds = time.perf_counter() - started
        (stage / "training" / "model-best").rename(stage / "model")
        meta = json.loads((stage / "model" / "meta.json").read_text(encoding="utf-8"))
        performance = meta.get("performance", {})
        dev_scores = {k: float(v) for k, v in performance.items() if isinstance(v, int | float)}
        for label, scores in (performance.get("ents_per_type") or {}).items():
            for key, value in scores.items():
                dev_scores[f"{label}.{key}"] = float(value)
        manifest = RecogniserManifest(
            name=name or out.name,
            format=FORMAT,
            spacy_version=spacy.__version__,
            labels=tuple(sorted(set(LABELS.values()))),
            created=datetime.now(UTC).isoformat(timespec="seconds"),
            trained_on=counts,
            selected_on=dev.name,
            dev_scores=dev_scores,
            settings={"width": width, "depth": depth, "max_epochs": max_epochs, "patience": patience},
            train_seconds=round(seconds, 1),
            device="cuda" if use_gpu >= 0 else "cpu",
        )
        shutil.rmtree(stage / "training", ignore_errors=True)
        for each in ("train.spacy", "dev.spacy"):
            (stage / each).unlink()
        write_atomic(stage / "manifest.json", json.dumps(asdict(manifest), indent=2) + "\n")
    return manifest


def read_recogniser_manifest(folder: Path) -> RecogniserManifest | TransformerManifest:
    """The manifest of a recogniser folder (the CNN's or the transformer's); a :class:`RecogniserError` when
    it is not one."""
    import spacy

    from curation.entities import transformer_recogniser as transformer

    folder = Path(folder)
    path = folder / "manifest.json"
    if (transformer.folder_format(folder) or "").startswith(transformer.FAMILY):
        return transformer.read_transformer_manifest(folder)
    if not path.is_file() or not (folder / "model" / "meta.json").is_file():
        raise RecogniserError(f"{folder}: not a recogniser folder (manifest.json and model/ expected); "
                              "train one with `python -m curation train-recogniser`")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        data["labels"] = tuple(data["labels"])
        manifest = RecogniserManifest(**data)
    except (ValueError, TypeError, KeyError) as exc:
        raise RecogniserError(f"{path}: malformed recogniser manifest ({exc})") from None
    if manifest.format != FORMAT:
        raise RecogniserError(f"{path}: recogniser format {manifest.format!r}, this version reads {FORMAT!r}; "
                              "train it again with `python -m curation train-recogniser`")
    ours, theirs = spacy.__version__.split(".")[:2], manifest.spacy_version.split(".")[:2]
    if ours != theirs:
        raise RecogniserError(f"{path}: trained with spaCy {manifest.spacy_version}, this is spaCy "
                              f"{spacy.__version__}; train it again with `python -m curation train-recogniser`")
    return manifest


class SpacyRecogniser:
    """A loaded recogniser: texts in, (start, end, kind) spans out.

    Attributes:
        name: the folder's manifest name (part of the annotator's version).
        manifest: the folder's :class:`RecogniserManifest`.
        processes: worker processes for large batches (spaCy's ``n_process``; batch jobs such as
            ``annotate`` and bulk ingest set it to the core count, the app keeps 1).
    """

    #: below this many texts, extra processes cost more to start than they save
    MIN_PARALLEL = 200

    def __init__(
        self, nlp: Language, manifest: RecogniserManifest, processes: int = 1, labels: dict[str, str] | None = None
    ) -> None:
        self.nlp = nlp
        self.manifest = manifest
        self.name = manifest.name
        self.processes = processes
        self.labels = labels if labels is not None else {label: label.lower() for label in manifest.labels}

    def recognise(self, texts: Sequence[str], batch_size: int = 32) -> list[list[tuple[int, int, str]]]:
        out = []
        processes = self.processes if len(texts) >= self.MIN_PARALLEL else 1
        for doc in self.nlp.pipe(texts, batch_size=batch_size, n_process=processes):
            out.append([(e.start_char, e.end_char, self.labels[e.label_]) for e in doc.ents if e.label_ in self.labels])
        return out


def load_recogniser(folder: Path, processes: int = 1) -> SpacyRecogniser | TransformerRecogniser:
    """Load a trained recogniser folder (the CNN's, or the transformer's of :mod:`.transformer_recogniser`,
    by its manifest's format), or an installed spaCy NER pipeline.

    A folder holding a spaCy pipeline of its own (``meta.json`` and ``config.cfg`` at the top, as an
    installed scispaCy model such as ``en_ner_bc5cdr_md`` has) is used as it is when its NER labels
    name kinds we know (:data:`FOREIGN_LABELS`); ``folder`` may also be the name of an installed
    spaCy package.
    """
    import spacy

    if not Path(folder).exists() and spacy.util.is_package(str(folder)):
        folder = spacy.util.get_package_path(str(folder))
    if (Path(folder) / "meta.json").is_file() and not (Path(folder) / "manifest.json").is_file():
        return _load_foreign(Path(folder), processes)
    from curation.entities import transformer_recogniser as transformer

    if (transformer.folder_format(folder) or "").startswith(transformer.FAMILY):
        return transformer.load_transformer_recogniser(Path(folder), processes)
    manifest = read_recogniser_manifest(folder)
    register()
    try:
        nlp = spacy.load(Path(folder) / "model")
    except (OSError, ValueError, KeyError) as exc:
        raise RecogniserError(f"{folder}/model: cannot be loaded as a spaCy pipeline ({exc})") from None
    return SpacyRecogniser(nlp, manifest, processes)


def _load_foreign(folder: Path, processes: int) -> SpacyRecogniser:
    """A spaCy NER pipeline trained elsewhere (a scispaCy model), its labels mapped to our kinds."""
    import spacy

    try:
        meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
        nlp = spacy.load(folder)
    except (OSError, ValueError, KeyError) as exc:
        raise RecogniserError(f"{folder}: cannot be loaded as a spaCy pipeline ({exc})") from None
    if "ner" not in nlp.pipe_names and "entity_ruler" not in nlp.pipe_names:
        raise RecogniserError(f"{folder}: this spaCy pipeline has no named-entity recogniser")
    found = set(nlp.pipe_labels.get("ner", ())) | set(nlp.pipe_labels.get("entity_ruler", ()))
    labels = {label: FOREIGN_LABELS[label] for label in found if label in FOREIGN_LABELS}
    if not labels:
        raise RecogniserError(f"{folder}: none of its entity labels ({', '.join(sorted(found)) or 'none'}) is a "
                              f"kind this app knows ({', '.join(sorted(FOREIGN_LABELS))})")
    name = f"{meta.get('lang', 'xx')}_{meta.get('name', folder.name)}-{meta.get('version', '0')}"
    manifest = RecogniserManifest(
        name=name, format=FORMAT, spacy_version=spacy.__version__, labels=tuple(sorted(labels)),
        created=str(meta.get("date", "")), trained_on={}, selected_on="(installed spaCy pipeline)",
        dev_scores={k: float(v) for k, v in (meta.get("performance") or {}).items() if isinstance(v, int | float)},
    )
    return SpacyRecogniser(nlp, manifest, processes, labels)
