"""The ranking tests' served search over the tiny ranking setup (tiny_ranker.py), built once per module."""

from __future__ import annotations

import pytest

from curation.entities.annotation import Annotator
from curation.entities.matching import Matcher
from curation.learning.served_fusion import served_search_for
from index.lexical import LexicalIndex
from index.search import Retriever
from tests.curation.ranking.tiny_ranker import DOCS, GDT, LEXICON


@pytest.fixture(scope="module")
def setup():
    matcher = Matcher(LEXICON)
    annotations = dict(zip([d.pmid for d in DOCS], Annotator(matcher).annotate([d.text for d in DOCS]), strict=True))
    search = served_search_for(matcher, annotations, {d.pmid: d for d in DOCS}, GDT)
    engine = Retriever(lexical=LexicalIndex.build(DOCS), version="test")
    return engine, search
