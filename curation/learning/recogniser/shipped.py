"""The recogniser that ships with the code: trained once by a documented command, activated after a first load.

Training the spaCy CNN takes 30-50 minutes on a 2-core CPU (docs/guide/annotating.md), too long for a newcomer's first
load. So a trained recogniser is kept in the repository, in :data:`SHIPPED` (``model/``, its ``manifest.json`` and
a ``provenance.json``), made by two commands anyone can run again (the shipped one learned from all six corpora,
chosen on BioRED Dev by ``bench/recogniser_corpora.py``)::

    python -m curation train-recogniser --corpora all --out models/recognisers/biomed-all-2
    python -m curation ship-recogniser models/recognisers/biomed-all-2

``ship-recogniser`` (:func:`ship_recogniser`) checks that the folder loads, then writes the provenance
(:class:`Provenance`): the SHA-256 of each corpus file the recogniser is trained and selected on (BioRED Train and
Dev, BC5CDR Train and the Dev/Test files whose documents are left out of training, and each NCBI corpus it read),
the code version (git commit) and its dev scores. After "Load the sample" (or ``quickstart``) the load's
``recogniser`` step (:mod:`curation.workflows.first_models`) installs it into ``models/recognisers/shipped-<name>``
and annotates the corpus with it in a background job, unless a recogniser is already active.
:func:`shipped_recogniser` compares the recorded digests with the data directory's files: when they differ, the
shipped recogniser still serves (it is trained on the public corpora), and the step's line says that ``python -m
curation train-recogniser`` trains one on this data."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from curation.entities.recogniser_corpus import RecogniserError
from curation.files import file_sha256, staged_folder, write_atomic

SHIPPED = Path(__file__).resolve().parent.parent / "shipped_recogniser"  # curation/learning/shipped_recogniser
PROVENANCE = "provenance.json"
FORMAT = "shipped-recogniser/1"
COMMANDS = ("python -m curation train-recogniser --corpora all --out models/recognisers/<name>",
            "python -m curation ship-recogniser models/recognisers/<name>")


@dataclass(frozen=True)
class Provenance:
    """How the shipped recogniser was made (``provenance.json``).

    Attributes:
        name: the recogniser's manifest name (installed as ``shipped-<name>``).
        data_digests: corpus file (relative to the data directory) → SHA-256 of its bytes.
        code_version: the git commit the recogniser was trained at ("" outside a git checkout).
        dev_scores: its manifest's dev scores (entity F1 overall and per type, on ``selected_on``).
        selected_on: the dev set.
        commands: the commands that made it.
        shipped: when.
    """

    name: str
    format: str
    data_digests: dict[str, str]
    code_version: str
    dev_scores: dict[str, float]
    selected_on: str
    commands: tuple[str, ...]
    shipped: str


@dataclass(frozen=True)
class ShippedRecogniser:
    """The shipped recogniser as this installation sees it.

    Attributes:
        folder: where it is (:data:`SHIPPED`).
        provenance: how it was made.
        data_matches: True when every recorded corpus file of the data directory has the recorded digest, False
            when one differs or is missing, None when the data directory holds none of them.
    """

    folder: Path
    provenance: Provenance
    data_matches: bool | None
    differing: tuple[str, ...] = ()

    def note(self) -> str:
        """One line on where it comes from, for the load's summary."""
        f1 = self.provenance.dev_scores.get("ents_f")
        scored = f" (dev entity F1 {f1:.3f} on {self.provenance.selected_on})" if f1 is not None else ""
        if self.data_matches is False:
            named = ", ".join(self.differing[:3]) + (f" and {len(self.differing) - 3} more" if len(self.differing) > 3
                                                     else "")
            return (f"the shipped recogniser {self.provenance.name}{scored}, trained on other copies of the corpora "
                    f"than this data directory's ({named} differ from the digests it recorded, or are missing): "
                    "Train & evaluate → Entity recogniser trains one on them (or `python -m curation "
                    "train-recogniser` while the app is stopped)")
        return f"the shipped recogniser {self.provenance.name}{scored}"


def corpus_files(trained_on: Iterable[str] = ()) -> tuple[str, ...]:
    """The data directory's files a recogniser is trained and selected on (relative paths): BioRED's and BC5CDR's,
    and each NCBI corpus's that ``trained_on`` (its manifest's counts: ``gnormplus_train.documents``, ...) names."""
    from curation.learning.recogniser.data import BC5CDR, BIORED
    from curation.learning.recogniser.ncbi_corpora import FILES

    parts = {key.split(".", 1)[0] for key in trained_on}
    return (*BIORED, *BC5CDR, *(f for corpus, f in FILES.items() if f"{corpus}_train" in parts))


def data_digests(data_dir: Path, files: Iterable[str] | None = None) -> dict[str, str]:
    """SHA-256 of each corpus file (default :func:`corpus_files`) the data directory holds."""
    names = corpus_files() if files is None else files
    return {name: file_sha256(Path(data_dir) / name) for name in names if (Path(data_dir) / name).is_file()}


def _code_version() -> str:
    try:
        done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=Path(__file__).parent, capture_output=True,
                              text=True, timeout=10)
    except OSError:
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def ship_recogniser(source: Path, data_dir: Path, out: Path = SHIPPED, code_version: str = "") -> Provenance:
    """Put the trained recogniser folder ``source`` in place as the shipped one, with its provenance.

    ``code_version``: the commit the recogniser was trained at, when not the checkout's current one.

    Raises:
        RecogniserError: ``source`` is not a recogniser of this version (it must load), or the data directory
            lacks a corpus file it was trained on (the digests would not say what it learned from).
    """
    from curation.entities.recogniser import load_recogniser, read_recogniser_manifest
    from curation.learning.recogniser.data import check_data_dir

    source = Path(source)
    manifest = read_recogniser_manifest(source)
    load_recogniser(source)  # refuses a folder that does not load, before anything is written
    check_data_dir(Path(data_dir))  # the provenance records the digest of every file it is trained on
    for name in corpus_files(manifest.trained_on):
        if not (Path(data_dir) / name).is_file():
            raise RecogniserError(f"{Path(data_dir) / name}: {manifest.name} was trained on this file, which the "
                                  "data directory lacks (its digest could not be recorded)")
    provenance = Provenance(
        name=manifest.name, format=FORMAT, data_digests=data_digests(data_dir, corpus_files(manifest.trained_on)),
        code_version=code_version or _code_version(), dev_scores=dict(manifest.dev_scores),
        selected_on=manifest.selected_on, commands=COMMANDS, shipped=datetime.now(UTC).isoformat(timespec="seconds"),
    )
    with staged_folder(out) as stage:
        _copy_recogniser(source, stage)
        write_atomic(stage / PROVENANCE, json.dumps(asdict(provenance), indent=2) + "\n")
    return provenance


def _copy_recogniser(source: Path, stage: Path) -> None:
    """A recogniser folder's spaCy pipeline and manifest, copied into ``stage``."""
    shutil.copytree(source / "model", stage / "model")
    shutil.copy2(source / "manifest.json", stage / "manifest.json")


def read_provenance(folder: Path) -> Provenance:
    """The provenance of a shipped recogniser folder; a :class:`RecogniserError` naming the file otherwise."""
    path = Path(folder) / PROVENANCE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        data["commands"] = tuple(data["commands"])
        provenance = Provenance(**data)
    except FileNotFoundError:
        raise RecogniserError(f"{path}: no provenance; ship a recogniser with `python -m curation "
                              "ship-recogniser`") from None
    except (ValueError, TypeError, KeyError) as exc:
        raise RecogniserError(f"{path}: malformed provenance ({exc})") from None
    if provenance.format != FORMAT:
        raise RecogniserError(f"{path}: format {provenance.format!r}, this version reads {FORMAT!r}")
    return provenance


def shipped_recogniser(data_dir: Path | None, folder: Path | None = None) -> ShippedRecogniser | None:
    """The shipped recogniser (``folder``, default :data:`SHIPPED`), or None when the code ships none (or it was
    made for another spaCy version).

    Raises:
        RecogniserError: its provenance is malformed.
    """
    from curation.entities.recogniser import read_recogniser_manifest

    folder = Path(folder) if folder is not None else SHIPPED
    if not (folder / PROVENANCE).is_file():
        return None
    provenance = read_provenance(folder)
    try:
        read_recogniser_manifest(folder)
    except RecogniserError:
        return None  # another spaCy version: it cannot load here, and the load goes on without it
    matches: bool | None = None
    differing: tuple[str, ...] = ()
    if data_dir is not None and any((Path(data_dir) / name).is_file() for name in provenance.data_digests):
        found = data_digests(data_dir, provenance.data_digests)
        differing = tuple(name for name, digest in provenance.data_digests.items() if found.get(name) != digest)
        matches = not differing
    return ShippedRecogniser(folder, provenance, matches, differing)


def install(shipped: ShippedRecogniser, recognisers: Path) -> Path:
    """Copy the shipped recogniser into ``recognisers/shipped-<name>`` (the models folder's recognisers); its folder.

    Its own folder name: ``train-recogniser`` publishes to ``recognisers/<name>`` by default, and would otherwise
    replace it (or be taken for it). A folder already there with the same provenance is kept.
    """
    target = Path(recognisers) / f"shipped-{shipped.provenance.name}"
    if (target / PROVENANCE).is_file():
        try:
            if read_provenance(target) == shipped.provenance:
                return target
        except RecogniserError:
            pass  # damaged: installed again below
    with staged_folder(target) as stage:
        _copy_recogniser(shipped.folder, stage)
        shutil.copy2(shipped.folder / PROVENANCE, stage / PROVENANCE)
    return target
