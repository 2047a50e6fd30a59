"""bm25s and JAX: importing the lexical index must not let JAX preallocate the GPU (issue 16, item 5).

bm25s imports JAX whenever it is installed; JAX then takes 75% of the GPU's memory in every process that
imports it, and the second retrain on a GPU machine ran out of CUDA memory. These tests put a fake `jax`
package first on the path, in a fresh interpreter, so they hold on machines with or without a real JAX.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# A fake JAX that writes down what the real one would have read at import (the preallocation setting)
# and every top_k call bm25s makes through it; its top_k is numpy's, so bm25s keeps working.
FAKE_JAX_INIT = textwrap.dedent(
    """
    import json, os
    from jax import lax  # noqa: F401  (bm25s runs `import jax.lax`)
    with open(os.environ["FAKE_JAX_RECORD"], "a") as f:
        f.write(json.dumps({"event": "import", "preallocate": os.environ.get("XLA_PYTHON_CLIENT_PREALLOCATE")}) + "\\n")
    """
)
FAKE_JAX_LAX = textwrap.dedent(
    """
    import json, os
    import numpy as np

    def top_k(scores, k):
        with open(os.environ["FAKE_JAX_RECORD"], "a") as f:
            f.write(json.dumps({"event": "top_k"}) + "\\n")
        order = np.argsort(-np.asarray(scores), kind="stable")[:k]
        return np.asarray(scores)[order], order
    """
)
PROGRAM = textwrap.dedent(
    """
    import json, os, sys
    from dataclasses import dataclass
    from pathlib import Path

    import index.lexical as lexical

    @dataclass(frozen=True)
    class Doc:
        pmid: str
        title: str
        abstract: str

        @property
        def text(self):
            return self.title + " " + self.abstract

    docs = [Doc("1", "BRAF V600E", "melanoma responds to vemurafenib"),
            Doc("2", "EGFR L858R", "lung cancer and erlotinib"),
            Doc("3", "KRAS G12C", "sotorasib in lung cancer")]
    with open(os.environ["FAKE_JAX_RECORD"], "a") as f:
        f.write(json.dumps({"event": "search"}) + "\\n")
    hits = lexical.LexicalIndex.build(docs).search(["lung cancer erlotinib"], k=2)
    print(json.dumps({"hits": [[d for d, _ in h] for h in hits], "jax": "jax" in sys.modules}))
    """
)


def _run(tmp_path: Path, env_extra: dict[str, str]) -> tuple[dict, list[dict]]:
    fake = tmp_path / "fake"
    (fake / "jax").mkdir(parents=True)
    (fake / "jax" / "__init__.py").write_text(FAKE_JAX_INIT)
    (fake / "jax" / "lax.py").write_text(FAKE_JAX_LAX)
    record = tmp_path / "record.jsonl"
    env = {k: v for k, v in os.environ.items() if k != "XLA_PYTHON_CLIENT_PREALLOCATE"}
    env.update({"PYTHONPATH": os.pathsep.join([str(fake), str(REPO)]), "FAKE_JAX_RECORD": str(record)})
    env.update(env_extra)
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in record.read_text().splitlines()] if record.exists() else []
    return json.loads(done.stdout.strip().splitlines()[-1]), events


def test_jax_never_preallocates_and_search_stays_on_numpy(tmp_path: Path) -> None:
    out, events = _run(tmp_path, {})
    assert out["hits"] == [["2", "3"]]
    imports = [e for e in events if e["event"] == "import"]
    # JAX either stays out, or it is imported with preallocation off.
    assert all(e["preallocate"] == "false" for e in imports), imports
    # The search itself never goes through JAX's top_k (bm25s's "auto" backend would).
    after_search = events[[e["event"] for e in events].index("search") + 1 :]
    assert not [e for e in after_search if e["event"] == "top_k"], events


def test_a_users_own_setting_wins(tmp_path: Path) -> None:
    _, events = _run(tmp_path, {"XLA_PYTHON_CLIENT_PREALLOCATE": "true"})
    assert [e["preallocate"] for e in events if e["event"] == "import"] in ([], ["true"])
