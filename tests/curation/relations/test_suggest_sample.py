"""The flagship suggestion on real data: BRAF + V600E on a sample-like store (CIViC, HoC's abstracts, DrugBank and
the installed vocabularies, loaded by "Load the sample"; the relation scorer trained on the data folder's corpora)
suggests vemurafenib and dabrafenib in the top 5, each with the sentence that says so and its direction."""

from __future__ import annotations

import pytest

from curation.config import Settings
from curation.entities.annotation import Annotator
from curation.relations.scorer_folder import write_scorer
from curation.relations.training import train_with_manifest
from curation.schemas import PO
from curation.store.opening import open_store
from curation.workflows.entities import dictionary_matcher
from curation.workflows.quickstart import load_sample
from curation.workflows.relation_scoring import activate_scorer, rescore
from curation.workflows.suggest import suggest


@pytest.mark.slow
def test_braf_v600e_suggests_vemurafenib_and_dabrafenib(tmp_path, data_dir, monkeypatch):
    sample = tmp_path / "data"  # the sample's CIViC, HoC and DrugBank files (BioRED and BC5CDR left out: faster)
    for folder in ("civic", "hoc", "dicts"):
        (sample / folder).mkdir(parents=True)
        for path in (data_dir / folder).iterdir():
            (sample / folder / path.name).symlink_to(path)
    for name in ("CURATION_CACHE_DIR", "CURATION_MODELS_DIR"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    settings = Settings(db_path=tmp_path / "s.duckdb", data_dir=sample, models_dir=tmp_path / "models",
                        cache_dir=tmp_path / "cache")
    con = open_store(settings.db_path)
    load_sample(con, settings, annotator=lambda: Annotator(dictionary_matcher(con)))
    scorer, manifest = train_with_manifest(data_dir, None, {}, {}, {}, None, "relations-test")
    assert scorer.direction is not None and manifest["direction"]["therapy"]["per_source"]["civic"] > 500
    rescore(con, activate_scorer(con, write_scorer(tmp_path / "scorer", scorer, manifest)))

    from curation.workflows.search import Searcher

    searcher = Searcher(con)
    engine, _ = searcher.engine(PO)
    result = suggest(con, engine, searcher.linker, searcher.matcher, PO, {"Gene": "BRAF", "Variant": "V600E"},
                     mode="bm25")
    top5 = {s.name.casefold(): s for s in result.suggestions[:5]}
    assert {"vemurafenib", "dabrafenib"} <= set(top5), [s.label() for s in result.suggestions[:8]]
    vemurafenib = top5["vemurafenib"]
    assert "vemurafenib" in vemurafenib.papers[0].sentence.casefold()
    assert vemurafenib.direction in ("responds to", "resistance")
    assert vemurafenib.direction in vemurafenib.label()
