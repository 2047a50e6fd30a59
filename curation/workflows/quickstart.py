"""Loading the sample: an empty store becomes a workbench with data in one action.

Which files the sample is (a data directory's, else fetched online) is :mod:`curation.ingest.sample`'s.
Either way the vocabularies of installed packages (MeSH, the drug vocabulary, gene aliases) load after
the files; a vocabulary whose package is missing is a note in the report, not a failure.

Each file is ingested in its own transaction through the same loaders as the CLI, so a load that is
killed half way leaves every finished file in place and the store usable, a malformed file is reported
by name and the others still load, and loading again adds nothing (ingestion is idempotent). A load is
planned as steps recorded in the store (:mod:`curation.store.loads`), each marked done once committed: the
next load, or the app's next start, finishes the steps a stopped load left pending
(:mod:`curation.workflows.load_state` says what is left).

Once the files are in, the documents are annotated into the concept index with the app's annotator
(:func:`curation.workflows.entities.reannotate`, stale documents only, one transaction per batch).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from curation import access
from curation.access import Action, Who
from curation.config import Settings
from curation.entities.annotation import Annotator
from curation.entities.dictionaries import dictionary_label, ingest_dictionary, vocabulary_kinds
from curation.entities.served_annotator import REANNOTATE_HINT
from curation.errors import USER_ERRORS, CurationError
from curation.ingest.sample import SampleFile, sample_files
from curation.ingest.sample import find_sample as find_sample  # for the pages (pages.parts.sample_loader)
from curation.relations.concept_index import AnnotationReport, Progress
from curation.store.loads import DONE, FAILED, PENDING, StepRow, finish_step, plan_load, unfinished_load
from curation.workflows.entities import reannotate
from curation.workflows.ingestion import ingest_corpus, ingest_kb

FILE_KINDS = ("kb", "corpus", "dict")  # the steps that read a file (or an installed vocabulary)
ANNOTATE = "annotate"  # the step that annotates the loaded documents into the concept index
INDEX_KINDS = (*FILE_KINDS, ANNOTATE)  # the steps the concept index is complete after
# The training steps a load ends with when asked (run by curation.workflows.first_models, in this order): the
# relation scorer, the base encoder version (the offline MiniLM indexing the corpus), and the shipped recogniser
# (curation.learning.recogniser.shipped) annotating the corpus.
RELATIONS, BASE_VERSION, RECOGNISER = "relations", "base-version", "recogniser"
TRAIN_STEPS = (RELATIONS, BASE_VERSION, RECOGNISER)


class LoadStopped(Exception):  # noqa: N818 - a stop asked for, not an error of the load
    """The load was asked to stop (the process is exiting); the step it was in stays pending."""


@dataclass(frozen=True)
class FileOutcome:
    """What loading one file did (``error`` says why it failed; nothing of it was written then)."""

    file: SampleFile
    added: int = 0
    unchanged: int = 0
    error: str = ""
    seconds: float = 0.0
    skipped: tuple[str, ...] = ()  # records left out of a file that loaded (a PubTator document), and why
    warnings: tuple[str, ...] = ()  # records kept, read other than as written


@dataclass(frozen=True)
class SampleReport:
    """What loading the sample did, and where the sample came from."""

    source: str
    outcomes: tuple[FileOutcome, ...] = field(default_factory=tuple)
    seconds: float = 0.0
    annotation: AnnotationReport | None = None
    annotation_error: str = ""  # why the documents could not be annotated at all (they are loaded)
    notes: tuple[str, ...] = ()  # vocabularies not loaded because their package is not installed

    @property
    def added(self) -> int:
        return sum(o.added for o in self.outcomes)

    @property
    def failed(self) -> tuple[FileOutcome, ...]:
        return tuple(o for o in self.outcomes if o.error)

    @property
    def nothing_new(self) -> bool:
        annotated = self.annotation.annotated if self.annotation is not None else 0
        return self.added == 0 and not self.failed and not annotated

    def summary(self) -> str:
        """One paragraph for a person: where from, what was added, what failed and why."""
        notes = "".join(f" {note}" for note in self.notes)
        if self.nothing_new:
            return (f"Nothing new: the sample from {self.source} is already in the store "
                    f"({len(self.outcomes)} files checked, {self.seconds:.0f} s).{notes}")
        loaded = [o for o in self.outcomes if not o.error]
        text = (f"Sample loaded from {self.source} in {self.seconds:.0f} s: {self.added:,} new rows from "
                f"{len(loaded)} of {len(self.outcomes)} files.")
        for outcome in self.failed:
            text += f" {outcome.file.label} failed: {outcome.error}"
        for outcome in (o for o in loaded if o.skipped):
            text += (f" {outcome.file.label}: {len(outcome.skipped)} left out, the rest loaded (first: "
                     f"{outcome.skipped[0]}).")
        if self.failed:
            text += " The other files are loaded; fix or remove the failed ones and load again."
        text += notes
        if self.annotation is not None:
            text += f" {self.annotation.summary()}."
        if self.annotation_error:
            text += (f" The abstracts are loaded but not annotated ({self.annotation_error}); highlights come from "
                     f"the dictionaries until they are annotated: {REANNOTATE_HINT}.")
        return text


FileProgress = Callable[[SampleFile, int, int], None]  # (file, its position from 1, files in all)
RowProgress = Callable[[SampleFile, int], None]  # (file, rows read so far)


def find_vocabularies(kinds: Sequence[str] | None = None) -> tuple[list[SampleFile], list[str]]:
    """The installed packages' vocabularies to load (``kinds``, default every one), and a note for each missing."""
    files, notes = [], []
    for kind in vocabulary_kinds() if kinds is None else kinds:
        try:
            files.append(SampleFile("dict", kind, None, dictionary_label(kind)))
        except CurationError as exc:
            notes.append(f"Vocabulary {kind} not loaded: {exc}.")
    return files, notes


def load_files(con: duckdb.DuckDBPyConnection, files: Sequence[SampleFile], on_file: FileProgress | None = None,
               on_rows: RowProgress | None = None, *, who: Who = "") -> list[FileOutcome]:
    """Ingest each file in its own transaction; a file that fails is reported and the others still load."""
    access.require(con, who, Action.IMPORT)
    outcomes = []
    for position, sample in enumerate(files, start=1):
        if on_file is not None:
            on_file(sample, position, len(files))
        started = time.time()

        def rows(count: int, sample: SampleFile = sample) -> None:
            if on_rows is not None:
                on_rows(sample, count)

        skipped = warnings = ()
        try:
            if sample.kind in ("kb", "corpus"):
                report = (ingest_kb if sample.kind == "kb" else ingest_corpus)(con, sample.fmt, sample.path,
                                                                               progress=rows, who=who)
                added, unchanged, skipped, warnings = report.added, report.unchanged, report.skipped, report.warnings
            else:
                read, added = ingest_dictionary(con, sample.fmt, sample.path)
                unchanged = read - added
        except (*USER_ERRORS, OSError, UnicodeDecodeError) as exc:
            outcomes.append(FileOutcome(sample, error=_reason(exc, sample), seconds=round(time.time() - started, 1)))
            continue
        outcomes.append(FileOutcome(sample, added, unchanged, seconds=round(time.time() - started, 1),
                                    skipped=skipped, warnings=warnings))
    return outcomes


def load_sample(con: duckdb.DuckDBPyConnection, settings: Settings, on_file: FileProgress | None = None,
                on_rows: RowProgress | None = None, transport=None,
                annotator: Annotator | Callable[[], Annotator] | None = None,
                on_annotated: Progress | None = None, *, who: Who = "",
                vocabularies: Sequence[str] | None = None, stop: Callable[[], bool] | None = None,
                train: bool = False) -> SampleReport:
    """Load the sample into the store: from the data directory, else fetched online; then the vocabularies.

    The load is planned first, as steps recorded in the store (each file, each vocabulary, annotating the
    documents), and each step is marked done once its work has committed. When an earlier load was stopped
    before its end (the process killed, the machine off), this call finishes that load's pending steps instead
    of planning a new one, so its counts end as a clean load's.

    ``vocabularies``: the installed vocabularies to load after the files (None: ``settings.vocabularies``,
    whose default is every one installed; a missing package is a note in the report).

    ``annotator`` (or a function returning it, called once the files are in) annotates the documents
    not yet annotated by it; None leaves them for ``python -m curation reannotate`` (and plans no annotation).

    ``train``: a new load's plan ends with :data:`TRAIN_STEPS`, which :mod:`curation.workflows.first_models`
    runs (not this function).

    ``stop``: asked between steps and between batches; when it says True the load stops with :class:`LoadStopped`,
    its current step left pending for the next start.

    Raises:
        NoSampleError: no data directory with sample files, and the online sample could not be had.
        LoadStopped: ``stop`` said so.
    """
    access.require(con, who, Action.IMPORT)
    started = time.time()
    load, notes = unfinished_load(con), []
    resumed = load is not None
    if load is None:
        files, source, notes = _sample_files(settings, transport, vocabularies)
        steps = [StepRow(0, f.kind, f.fmt, str(f.path) if f.path is not None else None, f.source) for f in files]
        steps += [StepRow(0, ANNOTATE)] if annotator is not None else []
        steps += [StepRow(0, kind) for kind in TRAIN_STEPS] if train else []
        load = plan_load(con, source, steps, started_by=who if isinstance(who, str) else who.name)
    file_steps = [step for step in load.steps if step.kind in FILE_KINDS]
    outcomes = []
    for step in (s for s in file_steps if s.state == PENDING):
        _check(stop)
        sample = SampleFile(step.kind, step.fmt, Path(step.path) if step.path else None, step.source)

        def at_file(file: SampleFile, _position: int, _total: int, position: int = step.position) -> None:
            if on_file is not None:
                on_file(file, position, len(file_steps))

        def at_rows(file: SampleFile, count: int) -> None:
            _check(stop)  # a big file stops between its batches (its transaction rolls back; the step stays pending)
            if on_rows is not None:
                on_rows(file, count)

        (outcome,) = load_files(con, [sample], at_file, at_rows, who=who)
        finish_step(con, load.load_id, step.position, FAILED if outcome.error else DONE, outcome.error)
        outcomes.append(outcome)
    annotation, problem = None, ""
    annotate = next((s for s in load.steps if s.kind == ANNOTATE and s.state == PENDING), None)
    if annotate is not None and annotator is not None:
        _check(stop)

        def at_batch(done: int, total: int) -> None:
            if on_annotated is not None:
                on_annotated(done, total)
            if done < total:
                _check(stop)

        try:
            chosen = annotator if isinstance(annotator, Annotator) else annotator()
            annotation = reannotate(con, chosen, stale_only=True, progress=at_batch, who=who)
        except LoadStopped:
            raise
        except Exception as exc:  # noqa: BLE001 - the files are in; say why the documents are not annotated
            problem = " ".join(str(exc).split())[:300] or type(exc).__name__
        failed = problem or "; ".join(annotation.errors if annotation is not None else ())
        finish_step(con, load.load_id, annotate.position, FAILED if failed else DONE, failed)
    source = f"{load.source}, finishing a load that had stopped" if resumed else load.source
    return SampleReport(source, tuple(outcomes), round(time.time() - started, 1), annotation, problem, tuple(notes))


def _sample_files(settings: Settings, transport, vocabularies: Sequence[str] | None
                  ) -> tuple[list[SampleFile], str, list[str]]:
    """The files a new load reads, where they come from, and a note for each vocabulary not installed."""
    files, source = sample_files(settings, transport)
    extra, notes = find_vocabularies(vocabularies if vocabularies is not None else settings.vocabularies)
    return files + extra, source, notes


def _check(stop: Callable[[], bool] | None) -> None:
    if stop is not None and stop():
        raise LoadStopped("the load was asked to stop; its steps left are finished at the next start")


def _reason(exc: BaseException, sample: SampleFile) -> str:
    text = str(exc).replace(str(sample.path), sample.label) if sample.path is not None else str(exc)
    if isinstance(exc, OSError) and not text:
        text = exc.strerror or type(exc).__name__
    return text
