"""Commands of the concept index: annotate files, activate a recogniser, re-annotate the store."""

from __future__ import annotations

import argparse
import sys

from tqdm import tqdm

from curation.cli.common import _open, operator
from curation.config import load_settings
from curation.files import write_atomic


def _bar(description: str):
    bar = tqdm(desc=description, unit=" docs", disable=None, leave=False)

    def update(done: int, total: int) -> None:
        bar.total = total
        bar.update(done - bar.n)

    return bar, update


def cmd_annotate(args: argparse.Namespace) -> int:
    """Annotate text / JSONL / PubTator files with the app's annotator; write PubTator or JSONL."""
    from curation.workflows.batch_annotation import annotate_corpus, batch_annotator, read_inputs, render

    documents = read_inputs(args.inputs, args.format)  # bad input stops here, before any loading
    settings = load_settings()
    con = _open(args) if args.db.exists() else None
    chosen, where = batch_annotator(con, settings, args.recogniser)
    print(f"annotating {len(documents)} documents with {chosen.annotator.version} ({where})", file=sys.stderr)
    if chosen.message:
        print(f"note: {chosen.message}", file=sys.stderr)
    bar, update = _bar("annotating")
    try:
        corpus = annotate_corpus(documents, chosen.annotator, progress=update)
    finally:
        bar.close()
    text = render(corpus, args.output_format)
    if args.out is None:
        sys.stdout.write(text)
    else:
        write_atomic(args.out, text)
        print(f"wrote {corpus.mentions} mentions of {len(documents)} documents to {args.out}", file=sys.stderr)
    return 0


def _reannotate(con, annotator, stale_only: bool) -> int:
    from curation.workflows.entities import reannotate

    bar, update = _bar("annotating")
    try:
        report = reannotate(con, annotator, stale_only=stale_only, progress=update, who=operator())
    finally:
        bar.close()
    print(report.summary())
    return 1 if report.failed else 0


def cmd_activate_recogniser(args: argparse.Namespace) -> int:
    """Load a recogniser folder, make it active, and re-annotate the documents it makes stale."""
    from curation.workflows.entities import (
        NO_RECOGNISER,
        activate_entity_model,
        current_annotator,
        deactivate_entity_model,
        dictionary_matcher,
    )

    settings = load_settings()
    con = _open(args)
    if args.off:
        deactivate_entity_model(con, "recogniser", who=operator())
        print(f"no recogniser active: {NO_RECOGNISER.split(': ', 1)[1]}")
        chosen = current_annotator(con, settings, dictionary_matcher(con)).annotator
        return 0 if args.no_reannotate else _reannotate(con, chosen, stale_only=True)
    if args.path is None:
        print("error: give the recogniser folder (or --off)", file=sys.stderr)
        return 2
    activated = activate_entity_model(con, "recogniser", args.path, settings=settings, who=operator())
    print(f"recogniser {activated.name} ({activated.path}) is active")
    if args.no_reannotate:
        print("documents keep their annotations until `python -m curation reannotate`")
        return 0
    chosen = current_annotator(con, settings, dictionary_matcher(con), recogniser=activated.model)
    if chosen.message:
        print(f"note: {chosen.message}")
    return _reannotate(con, chosen.annotator, stale_only=True)


def cmd_activate_linker(args: argparse.Namespace) -> int:
    """Load a linker folder against the store's lexicon, make it active, and re-annotate with it."""
    from curation.workflows.entities import (
        activate_entity_model,
        current_annotator,
        deactivate_entity_model,
        dictionary_matcher,
    )

    settings = load_settings()
    con = _open(args)
    matcher = dictionary_matcher(con)
    if args.off:
        deactivate_entity_model(con, "linker", who=operator())
        print("no linker active: recognised names are linked only when the dictionaries hold them exactly")
    elif args.path is None:
        print("error: give the linker folder (or --off)", file=sys.stderr)
        return 2
    else:
        activated = activate_entity_model(con, "linker", args.path, matcher.lexicon, settings=settings,
                                          who=operator())
        print(f"linker {activated.name} ({activated.path}) is active")
    chosen = current_annotator(con, settings, matcher)
    if chosen.message:
        print(f"note: {chosen.message}")
    if args.no_reannotate or chosen.annotator.recogniser is None:
        return 0
    return _reannotate(con, chosen.annotator, stale_only=True)


def cmd_reannotate(args: argparse.Namespace) -> int:
    """Annotate the store's stale documents (or all, with --all) with the current annotator."""
    from curation.workflows.entities import current_annotator, dictionary_matcher

    settings = load_settings()
    con = _open(args)
    chosen = current_annotator(con, settings, dictionary_matcher(con))
    if chosen.message:
        print(f"note: {chosen.message}")
    return _reannotate(con, chosen.annotator, stale_only=not args.all)
