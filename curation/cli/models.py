"""Commands that build and serve models, and keep the store safe: train, retrain, backup, recover, bench."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from curation import store
from curation.access import Action
from curation.cli.common import _open, _open_for, operator
from curation.config import load_settings
from curation.errors import CurationError


def cmd_train(args: argparse.Namespace) -> int:
    import tempfile

    from curation.learning.build import BuildRequest, IndexChoice
    from curation.learning.chain import build_from_snapshot
    from curation.learning.sampling import Ablation, SamplingConfig
    from curation.learning.snapshot import export_snapshot, load_snapshot
    from curation.learning.training import TrainConfig
    from curation.schemas import resolve_schema

    con = _open_for(args, Action.TRAIN)
    schema = resolve_schema(args.schema, store.list_schemas(con))
    with tempfile.TemporaryDirectory(prefix="curation-snapshot-") as folder:
        export_snapshot(con, Path(folder) / "snapshot")
        snapshot = load_snapshot(Path(folder) / "snapshot")
    con.close()
    print(f"snapshot {snapshot.digest[:12]}: {len(snapshot.records)} KB records, {len(snapshot.documents)} abstracts")
    request = BuildRequest(
        schema=schema, base_model=args.base, version=args.out.name, train=not args.zero_shot,
        train_config=TrainConfig(epochs=args.epochs, batch_size=args.batch_size, learning_rate=args.lr,
                                 max_seq_length=args.max_seq_length, max_steps=args.max_steps, device=args.device,
                                 seed=args.seed),
        sampling=SamplingConfig(per_class=args.per_class, ablation=Ablation(args.ablation), seed=args.seed),
        index=IndexChoice.from_settings(load_settings(), kind=args.index_kind, backend=args.backend),
    )
    built = build_from_snapshot(snapshot, request, args.out.parent, seed=args.seed, progress_file=args.progress_file)
    version = built.version
    print(f"published {version.path} in {version.manifest.total_seconds} s on {version.manifest.device}")
    dense = version.manifest.dense
    print(f"  dense index: {dense.get('kind')} on {dense.get('backend')} ({dense.get('chosen')})")
    for name, value in version.metrics.items():
        print(f"  dev {name}: {value:.4f}")
    return 0


def cmd_train_recogniser(args: argparse.Namespace) -> int:
    """Train the entity recogniser and publish its folder (activate it with activate-recogniser)."""
    from curation.learning.recogniser_data import train_standard_recogniser

    settings = load_settings()
    data_dir = args.data_dir or settings.data_dir
    out = args.out or settings.models_dir / "recognisers" / "biomed"
    manifest = train_standard_recogniser(data_dir, out, width=args.width, max_epochs=args.epochs, use_gpu=args.gpu)
    print(f"published {out} in {manifest.train_seconds} s on {manifest.device}")
    for key in sorted(k for k in manifest.dev_scores if k.endswith("f")):
        print(f"  {manifest.selected_on} {key}: {manifest.dev_scores[key]:.3f}")
    return 0


def cmd_train_linker(args: argparse.Namespace) -> int:
    """Fine-tune the entity linker's name encoder, calibrate it on dev, save it, print dev figures."""
    from curation.entities.linking import train_linker
    from curation.entities.name_encoder import NameEncoderConfig
    from curation.learning.linker_data import load_linker_data

    settings = load_settings()
    data = load_linker_data(args.data_dir or settings.data_dir)
    out = args.out or settings.models_dir / "linkers" / "names-minilm"
    print(f"{len(data.sets)} concepts ({sum(len(set(v)) > 1 for v in data.sets.values())} with two names or more), "
          f"{len(data.dev)} dev mentions")
    config = NameEncoderConfig(max_steps=args.steps, device=args.device, seed=args.seed)
    last = [0.0]

    def progress(step: int, total: int, loss: float) -> None:
        if step == total or step % 50 == 0:
            print(f"  step {step}/{total}  loss {loss:.4f}", flush=True)
        last[0] = loss

    _, manifest = train_linker(data.sets, data.kinds, data.lexicon, data.dev, out, config, counts=data.counts,
                               progress=progress)
    print(f"saved {out} ({manifest.train_seconds} s on {manifest.device}); w = {manifest.weight}")
    for name, value in manifest.dev.items():
        print(f"  dev {name}: {value}")
    for kind, rule in manifest.thresholds.items():
        print(f"  {kind}: apply when score >= {rule['min_score']:.3f} and margin >= {rule['min_margin']}: "
              f"{rule['dev_applied']} of {rule['dev_total']} dev names at precision {rule['dev_precision']}")
    return 0


def cmd_retrain(args: argparse.Namespace) -> int:
    """Start a background retraining job (KB + decisions) and follow it until it finishes."""
    from curation.jobs import retraining
    from curation.learning.feedback import FeedbackConfig

    settings = load_settings()
    con = _open_for(args, Action.TRAIN)
    recovered = retraining.recover_jobs(con)
    for job in recovered:
        print(f"job {job.job_id}: {job.state} {job.message}".rstrip())
    if args.status:
        for job in store.list_jobs(con, limit=10):
            print(f"job {job.job_id}  {job.state:<9}  {job.created_at[:19]}  {job.message}")
        return 0
    if args.cancel:
        running = store.active_jobs(con)
        if not running:
            print("no job is running")
            return 1
        job = retraining.cancel_job(con, running[0])
        print(f"job {job.job_id}: {job.state}; {job.message}")
        if not args.no_wait:
            job = retraining.wait_for(con, job)
            print(f"job {job.job_id}: {job.state}; {job.message}")
        return 0
    request = retraining.RetrainRequest(
        schema=args.schema, base_model=args.base, use_kb=not args.decisions_only,
        use_decisions=not args.kb_only, epochs=args.epochs, batch_size=args.batch_size, learning_rate=args.lr,
        max_seq_length=args.max_seq_length, max_steps=args.max_steps, device=args.device,
        tolerance=args.tolerance, seed=args.seed,
        feedback=FeedbackConfig(conflicts=args.conflicts, repeat=args.decision_repeat),
        cross_encoder=args.cross_encoder, index_kind=args.index_kind, index_backend=args.backend,
    )
    job = retraining.start_retrain(con, request, settings)
    print(f"job {job.job_id} started: worker pid {job.pid}, folder {job.job_dir}")
    if args.no_wait:
        print("the app (or `retrain --status`) finishes it: registers the version and activates it if good enough")
        return 0
    last = [""]

    def report(job: store.Job, progress: retraining.Progress | None) -> None:
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

    job = retraining.wait_for(con, job, report=report)
    print(f"job {job.job_id}: {job.state}; {job.message}")
    return 0 if job.state == "succeeded" else 1


def cmd_backup(args: argparse.Namespace) -> int:
    from curation.ops.backup import backups_dir_for
    from curation.workflows.maintenance import back_up

    folder = args.dir or backups_dir_for(load_settings().backups_dir, args.db)
    made = back_up(_open(args), load_settings(), folder, keep=args.keep, who=operator())
    counts = made.counts
    print(f"backed up {args.db} to {made.folder} in {made.manifest['seconds']} s "
          f"({made.manifest['bytes']:,} bytes): {counts.get('decisions', 0)} decision rows, "
          f"{counts.get('kb_records', 0)} KB records, {counts.get('documents', 0)} documents")
    return 0


def cmd_recover(args: argparse.Namespace) -> int:
    from curation.ops.backup import backups_dir_for
    from curation.workflows.maintenance import restore

    folder = args.dir or backups_dir_for(load_settings().backups_dir, args.db)
    report = restore(args.db, load_settings(), folder, who=operator())
    print(json.dumps(report.to_dict(), indent=2) if args.json else "\n".join(report.lines()))
    return 0


# The modules `python -m curation bench NAME` runs (`python -m bench.NAME`; each writes bench/results/NAME.json).
BENCHMARKS = ("app", "backup", "edel", "entities", "feedback", "first_run", "load", "matching", "report", "reproduce",
              "retrieval", "scale", "suggest", "suggest_cross_encoder", "team")


def cmd_bench(args: argparse.Namespace) -> int:
    """Run ``python -m bench.<name>`` as its own process with the arguments after the name.

    The package never imports bench/: a benchmark is a module of its own package, started like any other.
    """
    import subprocess

    from curation.config import PROJECT_ROOT

    path = PROJECT_ROOT / "bench" / f"{args.name}.py"
    if not args.name.replace("_", "").isalnum() or args.name.startswith("_") or not path.is_file():
        raise CurationError(f"benchmark script {path} is missing (see bench/ for the names)")
    return subprocess.run([sys.executable, "-m", f"bench.{args.name}", *args.args], cwd=PROJECT_ROOT).returncode
