"""The train command end to end on a tiny store: snapshot, class table, version published."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from curation.config import PROJECT_ROOT
from curation.versions.manifest import read_manifest
from tests.curation.tiny_po import DOCS, KB


@pytest.mark.slow
def test_train_command_publishes_a_version(tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"pmid": p, "title": t, "abstract": a}) + "\n" for p, t, a in DOCS))
    kb = tmp_path / "kb.tsv"
    kb.write_text("gene\tvariant\ttreatment\tpmid\n" + "".join("\t".join(row) + "\n" for row in KB))
    db, out = tmp_path / "s.duckdb", tmp_path / "models" / "po-tiny"

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "curation", *args, "--db", str(db)],
            cwd=PROJECT_ROOT,
            capture_output=True,
            text=True,
            timeout=900,
        )

    assert cli("ingest-corpus", "jsonl", str(corpus)).returncode == 0
    assert cli("ingest-kb", "tsv", str(kb), "--schema", "PO").returncode == 0
    result = cli(
        "train",
        "--schema",
        "PO",
        "--out",
        str(out),
        "--max-steps",
        "2",
        "--batch-size",
        "4",
        "--max-seq-length",
        "64",
        "--progress-file",
        str(tmp_path / "progress.json"),
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "training pairs by margin class (PO)" in result.stdout and "pos-1" in result.stdout
    manifest = read_manifest(out / "manifest.json")
    assert manifest.train_steps == 2 and manifest.schema == "PO" and manifest.documents == len(DOCS)
    assert manifest.snapshot and (out / "dense" / "dense.faiss").exists()
    again = cli("train", "--schema", "PO", "--out", str(out), "--max-steps", "1")
    assert again.returncode == 2 and "immutable" in again.stderr


@pytest.mark.slow
def test_train_builds_the_index_kind_and_backend_asked_for(tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"pmid": p, "title": t, "abstract": a}) + "\n" for p, t, a in DOCS))
    db = tmp_path / "s.duckdb"

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "curation", *args, "--db", str(db)], cwd=PROJECT_ROOT,
                              capture_output=True, text=True, timeout=900)

    assert cli("ingest-corpus", "jsonl", str(corpus)).returncode == 0
    hnsw = tmp_path / "models" / "po-hnsw"
    result = cli("train", "--schema", "PO", "--zero-shot", "--index-kind", "hnsw", "--out", str(hnsw))
    assert result.returncode == 0, result.stderr[-2000:]
    dense = json.loads((hnsw / "manifest.json").read_text())["dense"]
    assert (dense["kind"], dense["backend"], dense["hnsw_m"], dense["ef_search"]) == ("hnsw", "faiss", 32, 128)
    assert json.loads((hnsw / "dense" / "manifest.json").read_text())["index"]["kind"] == "hnsw"

    auto = tmp_path / "models" / "po-auto"
    assert cli("train", "--schema", "PO", "--zero-shot", "--out", str(auto)).returncode == 0
    dense = json.loads((auto / "manifest.json").read_text())["dense"]
    assert dense["kind"] == "flat" and "flat: 8 documents" in dense["chosen"]  # the rule, and why, recorded

    pytest.importorskip("milvus_lite")
    lite = tmp_path / "models" / "po-lite"
    result = cli("train", "--schema", "PO", "--zero-shot", "--backend", "milvus", "--out", str(lite))
    assert result.returncode == 0, result.stderr[-2000:]
    assert json.loads((lite / "manifest.json").read_text())["dense"]["backend"] == "milvus"
    assert (lite / "dense" / "milvus.db").exists() and not (lite / "dense" / "dense.faiss").exists()
    bad = cli("train", "--schema", "PO", "--zero-shot", "--index-kind", "annoy", "--out", str(tmp_path / "x"))
    assert bad.returncode == 2 and "annoy" in bad.stderr
