"""The sample's load as background work of the app's process: started by a click, resumed at the next start.

"Load the sample" starts :func:`start_load`, which runs :func:`curation.workflows.quickstart.load_sample` in a
thread of the server's process (:mod:`curation.runtime.background_work`), not in the page's script run: closing
the tab ends the session, not the load. Each step of the load is recorded in the store as it finishes, so a load
stopped by a killed server or a power cut is found at the next start (:func:`resume_unfinished_load`, called on
every run and acting once per process) and its pending steps finished in the background. While a load is
unfinished, :func:`index_state` says so, and what depends on the annotations says the index is still being built
instead of "none found".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import duckdb

from curation import access
from curation.access import Action, Who
from curation.config import Settings
from curation.entities.annotation import Annotator
from curation.ingest.sample import SampleFile
from curation.runtime.background_work import WorkState, current_work, start_work
from curation.runtime.exit import exiting
from curation.runtime.foreground import wait_for_quiet
from curation.runtime.matcher import build_matcher
from curation.store.base import stats
from curation.store.loads import StepRow, unfinished_load
from curation.workflows.entities import current_annotator
from curation.workflows.first_models import TRAIN_DELAY_S, TRAIN_QUIET_S, TRAIN_QUIET_WAIT_S, WAITING, train_pending
from curation.workflows.quickstart import ANNOTATE, INDEX_KINDS, load_sample

LOAD_WORK = "Loading the sample"
TRAIN_WORK = "Making the learned parts active"


def _work_name(settings: Settings, work: str = LOAD_WORK) -> str:
    # One load (and one training after it) per store: the key of the work carries the store's path.
    return f"{work} into {settings.db_path}"
# The annotator of the loaded documents, made from this thread's cursor once the files are in (the app passes the
# one it caches, so the first search finds its matcher built; None: one built here, as the command line does).
AnnotatorFor = Callable[[duckdb.DuckDBPyConnection], Annotator]

__all__ = ["LOAD_WORK", "TRAIN_WORK", "IndexState", "WorkState", "index_state", "load_work_state",
           "resume_unfinished_load", "start_load", "wait_for_load", "work_states"]


@dataclass(frozen=True)
class IndexState:
    """Whether the concept index (annotations, relation pairs) is complete, and what is left if not.

    Attributes:
        documents, annotated: abstracts in the store, and those the concept index holds.
        steps_left: the unfinished load's pending steps, for a person ("hoc/hoc_abstracts.jsonl",
            "annotating the abstracts"); empty when no load is unfinished.
        running: a load runs in this process now (its training steps, after the index's, do not make it building).
    """

    documents: int
    annotated: int
    steps_left: tuple[str, ...] = ()
    running: bool = False

    @property
    def building(self) -> bool:
        return bool(self.steps_left)

    def message(self) -> str:
        """"" when the index is complete; else that it is still being built, and what is left."""
        if not self.building:
            return ""
        left = f" Left: {', '.join(self.steps_left)}." if self.steps_left else ""
        how = ("it is being finished in the background" if self.running
               else "it is finished in the background at the app's next start, or by loading the sample again")
        return (f"The concept index is still being built ({self.annotated:,} of {self.documents:,} abstracts "
                f"annotated; {how}).{left} Until then, results and suggestions may miss what the rest holds: "
                "an empty answer does not mean there is none.")


def _step_label(step: StepRow) -> str:
    if step.kind == ANNOTATE:
        return "annotating the abstracts"
    if step.path is None:
        return step.source or step.fmt
    return SampleFile(step.kind, step.fmt, Path(step.path)).label


def index_state(con: duckdb.DuckDBPyConnection, settings: Settings) -> IndexState:
    """How complete the concept index is: the unfinished load's steps left, and whether a load runs now."""
    load = unfinished_load(con)
    left = tuple(_step_label(s) for s in load.pending if s.kind in INDEX_KINDS) if load is not None else ()
    work = current_work(_work_name(settings))
    running = work is not None and work.running()
    if not left:  # complete: the counts are not needed (every search asks)
        return IndexState(0, 0, (), running)
    counts = stats(con)
    return IndexState(int(counts["documents"]), int(counts["annotated_documents"]), left, running)


def _run(open_cursor: Callable[[], duckdb.DuckDBPyConnection], settings: Settings, train: bool,
         annotator_for: AnnotatorFor | None, report: Callable[[str, int, int], None]) -> str:
    con = open_cursor()  # a cursor of this thread's own

    reading = [""]  # the file being read, with its position ("3/14 · bc5cdr/CDR_TrainingSet.PubTator.txt")

    def on_file(sample: SampleFile, position: int, total: int) -> None:
        reading[0] = f"{position}/{total} · {sample.label}"
        report(reading[0], 0, 0)

    def on_rows(sample: SampleFile, rows: int) -> None:
        report(f"{reading[0]}: {rows:,} rows read", 0, 0)

    def annotator() -> Annotator:
        report("building the dictionaries' matcher", 0, 0)
        if annotator_for is not None:
            return annotator_for(con)
        matcher = build_matcher(con, cache_dir=settings.cache_dir / "lexicon")
        return current_annotator(con, settings, matcher).annotator

    def on_annotated(done: int, total: int) -> None:
        report("annotating the abstracts", done, total)

    # The load was allowed when it was planned (start_load checks who clicked); finishing it, here or at a later
    # start with no one signed in, is the app's own work: it runs as the account of the server's process.
    result = load_sample(con, settings, on_file, on_rows, annotator=annotator, on_annotated=on_annotated,
                         who=access.local_operator(), stop=exiting, train=train)
    summary = result.summary()
    left = unfinished_load(con)
    if left is not None and left.pending and not exiting():
        # The learned parts, once the index is complete, as work of their own: the load's summary shows now, and
        # the sidebar follows the training (the relation scorer and the shipped recogniser as background jobs; the base
        # version here).
        def train(report: Callable[[str, int, int], None]) -> str:
            report(WAITING, 0, 0)
            if not wait_for_quiet(TRAIN_DELAY_S, TRAIN_QUIET_S, TRAIN_QUIET_WAIT_S, exiting):
                return "the learned parts are made active at the next start"
            return train_pending(open_cursor(), settings, report, background=True, stop=exiting)

        start_work(_work_name(settings, TRAIN_WORK), TRAIN_WORK, train)
        summary += " The learned parts are being made active in the background."
    return summary


def _start(open_cursor: Callable[[], duckdb.DuckDBPyConnection], settings: Settings, train: bool,
           annotator_for: AnnotatorFor | None) -> WorkState:
    def run(report: Callable[[str, int, int], None]) -> str:
        return _run(open_cursor, settings, train, annotator_for, report)

    return start_work(_work_name(settings), LOAD_WORK, run).state()


def start_load(open_cursor: Callable[[], duckdb.DuckDBPyConnection], settings: Settings, *, who: Who = "",
               train: bool | None = None, annotator_for: AnnotatorFor | None = None) -> WorkState:
    """Start loading the sample in the background (or finishing a load that stopped); returns where it stands.

    ``train``: a new load ends with the learned parts' steps (:mod:`curation.workflows.first_models`); None: the
    settings' ``train_after_load``.

    A load already running in this process is left to run (its state is returned).

    Raises:
        AccessDeniedError, SignInExpiredError: ``who`` may not import.
    """
    access.require(open_cursor(), who, Action.IMPORT)
    return _start(open_cursor, settings, settings.train_after_load if train is None else train, annotator_for)


def resume_unfinished_load(open_cursor: Callable[[], duckdb.DuckDBPyConnection], settings: Settings,
                           annotator_for: AnnotatorFor | None = None
                           ) -> WorkState | None:
    """At a start: finish, in the background, a load that stopped before its end; None when there is none.

    Acts once per process: a load this process ran already (finished, or stopped with an error) is not started
    again by itself — a click on "Load the sample" does that — so a step that fails every time cannot loop.
    """
    work = current_work(_work_name(settings))
    if work is not None:
        return work.state()
    if unfinished_load(open_cursor()) is None:
        return None
    return _start(open_cursor, settings, False, annotator_for)  # a new plan is not made: its own steps run


def load_work_state(settings: Settings) -> WorkState | None:
    """The state of this process's load into the settings' store (running or finished), None when it ran none."""
    work = current_work(_work_name(settings))
    return work.state() if work is not None else None


def work_states(settings: Settings) -> list[WorkState]:
    """This process's load into the settings' store and the training after it, those it ran (for the sidebar)."""
    works = (current_work(_work_name(settings, name)) for name in (LOAD_WORK, TRAIN_WORK))
    return [work.state() for work in works if work is not None]


def wait_for_load(settings: Settings, timeout: float | None = None, training: bool = False) -> WorkState | None:
    """Wait for this process's load into the settings' store to end (``training``: the training after it too);
    the load's final state (tests, benchmarks)."""
    work = current_work(_work_name(settings))
    state = work.join(timeout) if work is not None else None
    if training and (after := current_work(_work_name(settings, TRAIN_WORK))) is not None:
        after.join(timeout)
    return state
