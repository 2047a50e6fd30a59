"""The served search over tiny_fusion.py's abstracts (BM25 + the keyword encoder's dense index), built once per
module."""

from __future__ import annotations

import pytest

from curation.entities.annotation import Annotator
from curation.entities.matching import Matcher
from curation.learning.served_fusion import served_search_for
from curation.schemas import PO
from index.dense import DenseIndex
from index.encoder import encode_documents
from index.lexical import LexicalIndex
from index.search import Retriever
from tests.curation.learning.tiny_fusion import DOCS, LEXICON
from tests.index.keyword_encoder import KeywordEncoder


@pytest.fixture(scope="module")
def setup():
    matcher = Matcher(LEXICON)
    annotations = dict(zip([d.pmid for d in DOCS], Annotator(matcher).annotate([d.text for d in DOCS]), strict=True))
    search = served_search_for(matcher, annotations, {d.pmid: d for d in DOCS}, PO)
    encoder = KeywordEncoder()
    engine = Retriever(lexical=LexicalIndex.build(DOCS),
                       dense=DenseIndex.build(encode_documents(encoder, DOCS), [d.pmid for d in DOCS], "keyword"),
                       encoder=encoder)
    return engine, search
