"""Commands that train models: the retriever (train, retrain), the entity recogniser and the entity linker."""

from __future__ import annotations

import argparse
from pathlib import Path

from curation.cli.common import _open, operator
from curation.config import load_settings


def cmd_train(args: argparse.Namespace) -> int:
    from curation.workflows.model_training import VersionOptions, build_version, training_snapshot

    con = _open(args)
    schema, snapshot = training_snapshot(con, args.schema, who=operator())
    con.close()
    print(f"snapshot {snapshot.digest[:12]}: {len(snapshot.records)} KB records, {len(snapshot.documents)} abstracts")
    options = VersionOptions(
        out=args.out, base_model=args.base, zero_shot=args.zero_shot, epochs=args.epochs, batch_size=args.batch_size,
        learning_rate=args.lr, max_seq_length=args.max_seq_length, max_steps=args.max_steps, device=args.device,
        seed=args.seed, per_class=args.per_class, ablation=args.ablation, index_kind=args.index_kind,
        index_backend=args.backend, progress_file=args.progress_file)
    version = build_version(snapshot, schema, options, load_settings()).version
    print(f"published {version.path} in {version.manifest.total_seconds} s on {version.manifest.device}")
    dense = version.manifest.dense
    print(f"  dense index: {dense.get('kind')} on {dense.get('backend')} ({dense.get('chosen')})")
    for name, value in version.metrics.items():
        print(f"  dev {name}: {value:.4f}")
    return 0


def cmd_train_recogniser(args: argparse.Namespace) -> int:
    """Train the entity recogniser (the spaCy CNN or the transformer) and publish its folder."""
    from curation.workflows.model_training import RecogniserOptions, recogniser_plan, train_recogniser

    options = RecogniserOptions(
        kind=args.kind, data_dir=args.data_dir, out=args.out, epochs=args.epochs, width=args.width,
        corpora=args.corpora, families=args.families, modifiers=args.modifiers, gpu=args.gpu, device=args.device,
        batch_size=args.batch_size, learning_rate=args.lr, max_steps=args.max_steps,
        max_documents=args.max_documents, progress_file=args.progress_file)
    plan = recogniser_plan(options, load_settings())
    if args.kind == "transformer":
        print(f"training the transformer recogniser on {plan.device}: at most {plan.epochs} epochs", flush=True)
    manifest = train_recogniser(options, plan)
    if args.kind == "transformer":
        print(f"published {plan.out} in {manifest.train_seconds} s on {manifest.device} "
              f"(best epoch {manifest.best_epoch} of {manifest.trained_on.get('epochs_run')})")
    else:
        print(f"published {plan.out} in {manifest.train_seconds} s on {manifest.device}")
    for key in sorted(k for k in manifest.dev_scores if k.endswith("f")):
        print(f"  {manifest.selected_on} {key}: {manifest.dev_scores[key]:.3f}")
    return 0


def cmd_ship_recogniser(args: argparse.Namespace) -> int:
    """Make a trained recogniser the one the code ships (activated after a first load), with its provenance."""
    from curation.workflows.model_training import ship_recogniser

    data_dir = args.data_dir or load_settings().data_dir
    provenance, shipped = ship_recogniser(args.folder, data_dir, code_version=args.code_version)
    print(f"shipped {provenance.name} at {shipped} (code {provenance.code_version[:12] or 'not a git checkout'}; "
          f"{provenance.selected_on} entity F1 {provenance.dev_scores.get('ents_f', float('nan')):.3f})")
    for name, digest in provenance.data_digests.items():
        print(f"  {name}: sha256 {digest[:16]}…")
    return 0


def cmd_train_linker(args: argparse.Namespace) -> int:
    """Fine-tune the entity linker's name encoder, calibrate it on dev, save it, print dev figures."""
    from curation.workflows.model_training import train_linker

    settings = load_settings()
    out = args.out or settings.models_dir / "linkers" / "names-minilm"
    manifest = train_linker(args.data_dir or settings.data_dir, out, args.steps, device=args.device, seed=args.seed)
    print(f"saved {out} ({manifest.train_seconds} s on {manifest.device}); w = {manifest.weight}")
    for name, value in manifest.dev.items():
        print(f"  dev {name}: {value}")
    for kind, rule in manifest.thresholds.items():
        print(f"  {kind}: apply when score >= {rule['min_score']:.3f} and margin >= {rule['min_margin']}: "
              f"{rule['dev_applied']} of {rule['dev_total']} dev names at precision {rule['dev_precision']}")
    return 0


def cmd_retrain(args: argparse.Namespace) -> int:
    """Start a background retraining job (KB + decisions) and follow it until it finishes."""
    from curation.workflows import retrain

    settings = load_settings()
    con = _open(args)
    recovered = retrain.recover_jobs(con, who=operator())
    for job in recovered:
        print(f"job {job.job_id}: {job.state} {job.message}".rstrip())
    if args.status:
        for job in retrain.history(con, limit=10):
            print(f"job {job.job_id}  {job.state:<9}  {job.created_at[:19]}  {job.message}")
        return 0
    if args.cancel:
        running = retrain.running_jobs(con)
        if not running:
            print("no job is running")
            return 1
        job = retrain.cancel(con, running[0].job_id, who=operator())
        print(f"job {job.job_id}: {job.state}; {job.message}")
        if not args.no_wait:
            job = retrain.wait_for(con, job)
            print(f"job {job.job_id}: {job.state}; {job.message}")
        return 0
    form = retrain.RetrainForm(
        schema=args.schema, base_model=args.base, use_kb=not args.decisions_only, use_decisions=not args.kb_only,
        epochs=args.epochs, batch_size=args.batch_size, learning_rate=args.lr, max_seq_length=args.max_seq_length,
        max_steps=args.max_steps, device=args.device, seed=args.seed, conflicts=args.conflicts,
        decision_repeat=args.decision_repeat, cross_encoder=args.cross_encoder, index_kind=args.index_kind,
        index_backend=args.backend,
    )
    job = retrain.start(con, form, settings, who=operator())
    print(f"job {job.job_id} started: worker pid {job.pid}, folder {job.job_dir}")
    if args.no_wait:
        print("the app (or `retrain --status`) finishes it: registers the version and activates it if good enough")
        return 0
    last = [""]

    def report(job: retrain.Job, progress: retrain.Progress | None) -> None:
        if progress is None:
            return
        line = f"  {progress.stage}"
        if progress.step is not None and progress.total:
            line += f" {progress.step}/{progress.total}"
        if progress.loss is not None:
            line += f" loss {progress.loss:.4f}"
        if progress.eta_s:
            line += f" eta {progress.eta_s:.0f} s"
        if line != last[0]:
            print(line, flush=True)
            last[0] = line

    job = retrain.wait_for(con, job, report=report)
    print(f"job {job.job_id}: {job.state}; {job.message}")
    return 0 if job.state == "succeeded" else 1


def _index_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--index-kind", choices=("auto", "flat", "hnsw", "ivfpq"), default="",
                   help="the dense index (default CURATION_INDEX_KIND, else auto: flat up to 200k abstracts, then "
                        "HNSW while it fits in half the memory, then IVF-PQ with 8-bit re-ranking)")
    p.add_argument("--backend", choices=("faiss", "milvus"), default="",
                   help="where the vectors live (default CURATION_INDEX_BACKEND, else faiss; milvus: "
                        "CURATION_MILVUS_URI, or a Milvus Lite file in the version folder)")


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """Add train, train-recogniser, train-linker and retrain to ``sub`` (``common`` holds ``--db``)."""
    settings = load_settings()
    p = sub.add_parser("train", parents=[common], help="train an EDEL retriever on the KB and publish a model version")
    p.add_argument("--schema", required=True)
    p.add_argument("--base", default="", help="base encoder: a sentence-transformers name or folder (default MiniLM)")
    p.add_argument("--out", type=Path, required=True, help="models/<version> (must not exist)")
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--lr", type=float, default=2e-5)
    p.add_argument("--max-seq-length", type=int, default=256)
    p.add_argument("--max-steps", type=int, default=0, help="stop after this many steps (0: no limit)")
    p.add_argument("--per-class", type=int, default=2, help="negatives per class per positive")
    p.add_argument("--ablation", default="edel", choices=("edel", "no_multimargin", "no_noisy_pos", "no_hard_neg"))
    p.add_argument("--zero-shot", action="store_true", help="index with the base model, no training")
    p.add_argument("--device", default="", help="cuda or cpu (default: CUDA when present)")
    p.add_argument("--seed", type=int, default=13)
    p.add_argument("--progress-file", type=Path, help="JSON progress (step, total, loss, eta) for other programs")
    _index_options(p)
    p.set_defaults(func=cmd_train)

    p = sub.add_parser("train-recogniser",
                       help="train the entity recogniser on BioRED + BC5CDR Train (selected on BioRED Dev)")
    p.add_argument("--kind", choices=("cnn", "transformer"), default="cnn",
                   help="cnn: spaCy's CNN (fast on a CPU); transformer: MiniLM fine-tuned as a token tagger")
    p.add_argument("--data-dir", type=Path, default=None, help=f"annotated corpora (default {settings.data_dir})")
    p.add_argument("--out", type=Path, default=None,
                   help=f"recogniser folder (default {settings.models_dir}/recognisers/biomed, or .../transformer)")
    p.add_argument("--epochs", type=int, default=0,
                   help="at most this many epochs, best dev epoch kept (default 25 for cnn; transformer: 10 on "
                        "a GPU, 2 on a CPU)")
    p.add_argument("--width", type=int, default=128, help="cnn: token vector width")
    p.add_argument("--corpora", choices=("standard", "all"), default="standard",
                   help="cnn: standard: BioRED + BC5CDR Train; all: also GNormPlus, NLM-Gene, tmVar3 and NCBI disease "
                        "from ner_corpora/, each partially annotated (its other kinds left missing)")
    p.add_argument("--families", choices=("gene", "missing"), default="missing",
                   help="cnn, --corpora all: GNormPlus / NLM-Gene FamilyName mentions taught as genes, or left missing")
    p.add_argument("--modifiers", choices=("disease", "missing"), default="missing",
                   help="cnn, --corpora all: NCBI disease Modifier mentions taught as diseases, or left missing")
    p.add_argument("--gpu", type=int, default=-1, help="cnn: GPU id (default: CPU)")
    p.add_argument("--device", default="", help="transformer: cuda or cpu (default: CUDA when present)")
    p.add_argument("--batch-size", type=int, default=16, help="transformer: windows per step")
    p.add_argument("--lr", type=float, default=1e-4, help="transformer: peak learning rate")
    p.add_argument("--max-steps", type=int, default=0, help="transformer: stop after this many steps (0: no cap)")
    p.add_argument("--max-documents", type=int, default=0,
                   help="transformer: first N documents of each part only (a quick check; 0: all)")
    p.add_argument("--progress-file", type=Path, help="transformer: JSON progress (step, total, loss, eta)")
    p.set_defaults(func=cmd_train_recogniser)

    p = sub.add_parser("ship-recogniser",
                       help="make a trained recogniser folder the one the code ships (activated after a first load)")
    p.add_argument("folder", type=Path, help="a folder train-recogniser published (e.g. models/recognisers/biomed)")
    p.add_argument("--data-dir", type=Path, default=None,
                   help=f"the corpora it was trained on, whose digests are recorded (default {settings.data_dir})")
    p.add_argument("--code-version", default="",
                   help="the git commit it was trained at (default: this checkout's current commit)")
    p.set_defaults(func=cmd_ship_recogniser)

    p = sub.add_parser("train-linker", help="fine-tune the entity linker's name encoder on synonym sets")
    p.add_argument("--data-dir", type=Path, default=None, help=f"shared data folder (default {settings.data_dir})")
    p.add_argument("--out", type=Path, default=None,
                   help=f"linker folder (default {settings.models_dir / 'linkers' / 'names-minilm'})")
    p.add_argument("--steps", type=int, default=600, help="optimisation steps (about 12 min on one CPU core)")
    p.add_argument("--device", default="", help="cuda or cpu (default: CUDA when present)")
    p.add_argument("--seed", type=int, default=13)
    p.set_defaults(func=cmd_train_linker)

    p = sub.add_parser("retrain", parents=[common],
                       help="retrain in the background on the KB and curators' decisions; activate if not worse")
    p.add_argument("--schema", default="PO")
    p.add_argument("--base", default="", help="base encoder: a sentence-transformers name or folder (default MiniLM)")
    p.add_argument("--epochs", type=int, default=0, help="0: 10 on CUDA (best dev epoch kept), 1 on a CPU")
    p.add_argument("--batch-size", type=int, default=0, help="0: 32 on CUDA, 16 on a CPU")
    p.add_argument("--cross-encoder", choices=("auto", "on", "off"), default="auto",
                   help="also train the cross-encoder re-ranker (auto: on a GPU only); served if it helps on dev")
    p.add_argument("--lr", type=float, default=2e-5)
    p.add_argument("--max-seq-length", type=int, default=0, help="0: 256 tokens on CUDA, 128 on a CPU")
    p.add_argument("--max-steps", type=int, default=0, help="stop after this many steps (0: no limit)")
    p.add_argument("--device", default="", help="cuda or cpu (default: CUDA when present)")
    p.add_argument("--conflicts", choices=("exclude", "latest"), default="exclude",
                   help="items curators disagree on, without adjudication: leave out, or take the latest")
    p.add_argument("--decision-repeat", type=int, default=1, help="how many times each decision pair is used")
    p.add_argument("--seed", type=int, default=13)
    only = p.add_mutually_exclusive_group()
    only.add_argument("--kb-only", action="store_true", help="train on the KB alone")
    only.add_argument("--decisions-only", action="store_true", help="train on the decisions alone")
    _index_options(p)
    p.add_argument("--no-wait", action="store_true", help="start the job and return")
    p.add_argument("--status", action="store_true", help="list recent jobs (and finish any whose worker ended)")
    p.add_argument("--cancel", action="store_true", help="cancel the running job")
    p.set_defaults(func=cmd_retrain)
