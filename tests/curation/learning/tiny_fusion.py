"""Three abstracts on which BM25 and a dense model disagree, for the tests of the served fusion and its
cross-encoder stage."""

from __future__ import annotations

from curation.entities.lexicon import Lexicon
from curation.records import Document, Synonym

# "A" writes BRAF often among many other topics (BM25's favourite, the dense model's least);
# "B" writes it once and little else (the dense model's favourite).
DOCS = [
    Document("A", "BRAF BRAF BRAF", "BRAF kinase, EGFR in lung, KRAS and cisplatin; BRAF again."),
    Document("B", "Sequencing of tumour samples", "Samples from forty patients were sequenced; one carried a change in "
             "BRAF, described here with its clinical course, the treatment given and the outcome after two years."),
    Document("C", "Unrelated", "Cisplatin in the kidney."),
]
LEXICON = Lexicon([Synonym("673", "gene", "BRAF", "test", True), Synonym("1956", "gene", "EGFR", "test", True)])
