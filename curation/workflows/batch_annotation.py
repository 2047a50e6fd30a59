"""``python -m curation annotate``: any corpus in, every recognised mention out, as PubTator or JSON lines.

The same :class:`~curation.entities.annotation.Annotator` as the app (the active recogniser and linker
of the store, or one given, over the store's dictionaries): :func:`batch_annotator` chooses it. The inputs are
read by :mod:`curation.ingest.annotation_inputs` (text, JSON lines, PubTator), annotated and written by
:mod:`curation.entities.batch_annotation` (PubTator or JSON lines); the command line calls the three through here.
Bad input stops the run with the file and line, before anything is loaded; the output file is written whole or
not at all.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from curation.config import Settings
from curation.entities.annotation import Annotator
from curation.entities.batch_annotation import annotate_corpus as annotate_corpus  # the command's steps
from curation.entities.batch_annotation import render as render
from curation.entities.served_annotator import (
    CurrentAnnotator,
    current_annotator,
    dictionary_matcher,
    load_entity_model,
)
from curation.ingest.annotation_inputs import read_inputs as read_inputs
from curation.store.opening import open_store


def batch_annotator(
    con: duckdb.DuckDBPyConnection | None, settings: Settings, recogniser: Path | None = None,
) -> tuple[CurrentAnnotator, str]:
    """The annotator ``annotate`` uses, and where its dictionaries come from (a line for a person).

    Args:
        con: the store whose dictionaries (and active recogniser) to use; None: the sample of
            ``settings.data_dir`` loaded into a store in memory, as the app loads it, or, without
            one, the notation rules and built-in vocabularies alone.
        recogniser: a recogniser folder to use instead of the store's active one.

    Raises:
        EntityModelError: ``recogniser`` does not load.
    """
    if con is not None:
        where = "the store's dictionaries"
    else:
        from curation.ingest.sample import find_sample
        from curation.workflows.quickstart import load_files

        con = open_store(":memory:")
        files = find_sample(settings.data_dir)
        load_files(con, files)
        where = (f"dictionaries from the data directory {settings.data_dir}" if files else
                 "no store and no data directory: notation rules and built-in vocabularies only")
    matcher = dictionary_matcher(con)
    if recogniser is not None:
        model = load_entity_model("recogniser", recogniser)
        return CurrentAnnotator(Annotator(matcher, recogniser=model)), where
    return current_annotator(con, settings, matcher), where
