"""Commands of the concept index: normalise a name, annotate files, activate a recogniser or linker, re-annotate
the store."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

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


def cmd_normalise(args: argparse.Namespace) -> int:
    from curation.workflows.entities import normalise_name

    candidates = normalise_name(_open(args, read_only=True), args.text, kind=args.kind, k=args.k)
    if args.json:
        print(json.dumps([c.__dict__ if hasattr(c, "__dict__") else c._asdict() for c in candidates], indent=2))
        return 0
    if not candidates:
        print(f"no concept found for '{args.text}'")
        return 1
    for c in candidates:
        print(f"{c.score:6.3f}  {c.kind:<9} {c.canonical:<30} (matched '{c.matched}' by {c.how}; {c.concept_id})")
    return 0


def cmd_annotate(args: argparse.Namespace) -> int:
    """Annotate text / JSONL / PubTator files with the app's annotator; write PubTator or JSONL."""
    from curation.workflows.batch_annotation import annotate_corpus, batch_annotator, read_inputs, render

    # Bad input stops here, before any loading; a PubTator document that cannot be read is left out and named.
    documents = read_inputs(args.inputs, args.format,
                            on_skipped=lambda message: print(f"warning: skipped {message}", file=sys.stderr))
    settings = load_settings()
    con = _open(args, read_only=True) if args.db.exists() else None  # it writes files, never the store
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
        from curation.workflows.linker_training import NO_LINKER

        print(NO_LINKER)
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


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """Add normalise, annotate, activate-recogniser, activate-linker and reannotate to ``sub`` (``common`` holds
    ``--db``)."""
    p = sub.add_parser("normalise", parents=[common], help="find the concepts a typed name may mean")
    p.add_argument("text")
    p.add_argument("--kind", choices=("gene", "variant", "chemical", "disease", "ptm", "residue"))
    p.add_argument("-k", type=int, default=5, help="how many candidates")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_normalise)

    p = sub.add_parser("annotate", parents=[common],
                       help="write every recognised mention of text / JSONL / PubTator files as PubTator or JSONL")
    p.add_argument("inputs", nargs="+", type=Path)
    p.add_argument("--format", choices=("text", "jsonl", "pubtator"), default=None,
                   help="input format (default: from each file's name: .jsonl, *pubtator*, else text with documents "
                        "separated by blank lines)")
    p.add_argument("--out", type=Path, help="output file, written whole or not at all (default: standard output)")
    p.add_argument("--output-format", choices=("pubtator", "jsonl"), default="pubtator")
    p.add_argument("--recogniser", type=Path, help="a recogniser folder (default: the store's active one, if any)")
    p.set_defaults(func=cmd_annotate)

    for kind, does, off, func in (
        ("recogniser", "re-annotate the documents", "use no recogniser (dictionaries only)", cmd_activate_recogniser),
        ("linker", "re-annotate with the active recogniser", "use no linker (exact dictionary names only)",
         cmd_activate_linker),
    ):
        p = sub.add_parser(f"activate-{kind}", parents=[common],
                           help=f"check a trained {kind} folder, make it the app's, {does}")
        p.add_argument("path", type=Path, nargs="?")
        p.add_argument("--off", action="store_true", help=off)
        p.add_argument("--no-reannotate", action="store_true", help="only activate; `reannotate` later")
        p.set_defaults(func=func)

    p = sub.add_parser("reannotate", parents=[common],
                       help="annotate the store's documents not yet annotated by the current annotator")
    p.add_argument("--all", action="store_true", help="every document, stale or not")
    p.set_defaults(func=cmd_reannotate)
