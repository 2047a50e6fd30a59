"""The tiny ranking setup the ranker's tests share: a schema, five abstracts and their lexicon (the served search
over them is conftest.py's ``setup``), synthetic candidate lists and a ranker trained to reverse the served order."""

from __future__ import annotations

import numpy as np

from curation.entities.lexicon import Lexicon
from curation.learning.ranker.training import CandidateLists, train_ranker
from curation.ranking.features import FEATURE_NAMES
from curation.ranking.model import RankerModel
from curation.ranking.stage import RANKER_FOLDER, LearnedStage
from curation.records import Document, Synonym
from curation.retrieval.relation_search import SearchOptions, search_relation
from curation.schemas import RelationSchema

GDT = RelationSchema(
    name="GDT", entity_types=("Gene", "Disease", "Treatment"), answer="Treatment",
    templates=("Treatment for gene {Gene} and disease {Disease}?", "Treatment for gene {Gene}?"),
    kinds=(("Gene", "gene"), ("Disease", "disease"), ("Treatment", "chemical")),
)
DOCS = [
    Document("1", "BRAF in melanoma", "Vemurafenib treats BRAF mutant melanoma. Dabrafenib also works."),
    Document("2", "Kinases in cancer", "EGFR and KRAS are common. Melanoma is a skin cancer. BRAF is a kinase too."),
    Document("3", "A BRAF review", "BRAF BRAF BRAF signalling, reviewed at length without any disease named."),
    Document("4", "Melanoma outcomes", "Melanoma survival improved; BRAF status was recorded."),
    Document("5", "Lung cancer and EGFR", "EGFR mutant lung cancer responds to gefitinib."),
]
LEXICON = Lexicon([
    Synonym("673", "gene", "BRAF", "test", True), Synonym("1956", "gene", "EGFR", "test", True),
    Synonym("3845", "gene", "KRAS", "test", True), Synonym("D008545", "disease", "melanoma", "test", True),
    Synonym("D008175", "disease", "lung cancer", "test", True),
    Synonym("C0001", "chemical", "vemurafenib", "test", True), Synonym("C0002", "chemical", "dabrafenib", "test", True),
    Synonym("C0003", "chemical", "gefitinib", "test", True),
])
QUERY = {"Gene": "BRAF", "Disease": "melanoma"}


def _search(engine, search, values=QUERY, **options):
    return search_relation(engine, search.linker, search.matcher, search.source, search.documents, GDT, values,
                           SearchOptions(**options))


def _synthetic(n_lists: int = 300, size: int = 20, seed: int = 0) -> CandidateLists:
    """Lists whose relevant documents mention both concepts in a sentence and come late in the served order."""
    rng = np.random.default_rng(seed)
    rows = rng.normal(size=(n_lists * size, len(FEATURE_NAMES)))
    rows[:, FEATURE_NAMES.index("served_rank")] = np.tile(np.arange(1, size + 1), n_lists)
    shared = rng.integers(0, 3, size=n_lists * size)
    rows[:, FEATURE_NAMES.index("shared_sentence")] = shared
    gains = np.where(shared == 2, 2, 0).astype(np.int32)
    keys = [f"q{i}" for i in range(n_lists)]
    return CandidateLists(keys, [size] * n_lists, rows, gains, [f"d{i}" for i in range(n_lists * size)])


def _reversing_stage(tmp_path) -> LearnedStage:
    """A ranker that learned to put the served order's last candidates first (so its effect is visible)."""
    lists = _synthetic(seed=1)
    ranks = lists.rows[:, FEATURE_NAMES.index("served_rank")]
    lists.gains = np.where(ranks >= 3, 2, 0).astype(np.int32)
    model, _ = train_ranker(lists, ("served_rank",), depth=10)
    return LearnedStage(RankerModel.load(model.save(tmp_path / RANKER_FOLDER)))
