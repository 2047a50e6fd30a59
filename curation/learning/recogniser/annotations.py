"""What a recogniser's job writes for the app: the snapshot annotated with the new recogniser, read back by the app.

Why the worker annotates: re-annotating ~3,700 abstracts takes 1–2 minutes of CPU. In the worker it costs the app
nothing and survives an app restart (the file waits in the job folder); in a thread of the app it would compete
with every page render for the interpreter, race the ingest path's writes and be lost, half done, when the app
stops. The app then only loads the file, in one transaction (:mod:`curation.workflows.recogniser_training`).

``annotations.jsonl``: a header line with the annotator version, then one line per document: PMID, text length,
and its concept-index rows (gold mentions as :func:`~curation.entities.gold.gold_rows` makes them, then the
predicted ones), annotated by the app's annotator built the app's way (the snapshot's lexicon →
:class:`~curation.entities.matching.Matcher`, the new recogniser, the linker active when the job started).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from curation.errors import USER_ERRORS
from curation.files import write_atomic
from curation.learning.job_files import read_worker_lines
from curation.learning.learner import Workspace
from curation.store.annotations import AnnotationRow

ANNOTATIONS = "annotations.jsonl"
BATCH = 200  # documents annotated between progress reports and cancel checks


def annotate_snapshot(work: Workspace, recogniser, linker_folder: str) -> tuple[int, str, str]:
    """Annotate the snapshot's documents as the app would and write ``annotations.jsonl``.

    Returns:
        (documents annotated, the annotator version, a note when the linker could not be loaded).
    """
    from curation.entities.annotation import Annotator
    from curation.entities.dictionaries import snapshot_lexicon
    from curation.entities.gold import gold_rows
    from curation.entities.matching import Matcher
    from curation.learning.snapshot import load_snapshot
    from curation.training_loop import TrainingCancelled, write_progress

    snapshot = load_snapshot(work.snapshot)
    matcher = Matcher(snapshot_lexicon(snapshot))
    linker, note = None, ""
    if linker_folder:
        try:
            from curation.entities.linking import load_linker

            linker = load_linker(Path(linker_folder), matcher.lexicon)
        except (*USER_ERRORS, ImportError, OSError, ValueError) as exc:
            note = f"; the active linker could not be loaded ({exc}), recognised names are linked exactly only"
    annotator = Annotator(matcher, recogniser=recogniser, linker=linker)
    documents = list(snapshot.documents.values())
    lines = [json.dumps({"annotator": annotator.version, "documents": len(documents)})]
    for first in range(0, len(documents), BATCH):
        if work.cancelled():
            raise TrainingCancelled("cancelled while annotating; the recogniser folder is kept, not activated")
        chunk = documents[first : first + BATCH]
        write_progress(work.progress, state="annotating", step=first, total=len(documents), loss=None, eta_s=None,
                       epoch=None)
        for document, found in zip(chunk, annotator.annotate([d.text for d in chunk]), strict=True):
            rows = [list(row) for row in gold_rows(document, matcher.lexicon)]
            rows += [[document.pmid, a.start, a.end, a.text, a.type, a.concept_id, a.canonical, a.confidence,
                      a.source, annotator.version] for a in found]
            lines.append(json.dumps({"pmid": document.pmid, "chars": len(document.text), "rows": rows},
                                    ensure_ascii=False))
    write_atomic(work.folder / ANNOTATIONS, "\n".join(lines) + "\n")
    return len(documents), annotator.version, note


@dataclass(frozen=True)
class DocumentAnnotations:
    """One line of ``annotations.jsonl``: a document's text length and its concept-index rows (gold and predicted)."""

    pmid: str
    chars: int
    rows: tuple[AnnotationRow, ...]


def read_annotations(path: Path) -> tuple[str, Iterator[DocumentAnnotations]]:
    """The annotator version of ``annotations.jsonl`` and its documents (read lazily).

    Raises:
        CurationError: the file is missing, its header is not one, or a line is corrupted (the message names the
            file and line).
    """
    def parse(data: dict) -> DocumentAnnotations:
        pmid = str(data["pmid"])
        rows = tuple(AnnotationRow(*row) for row in data["rows"])
        if any(row.pmid != pmid for row in rows):
            raise ValueError(f"a row of another document than {pmid}")
        return DocumentAnnotations(pmid, int(data["chars"]), rows)

    return read_worker_lines(path, "annotator", "annotations", parse)
