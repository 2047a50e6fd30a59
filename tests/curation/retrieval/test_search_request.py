"""A command's relation checked against the store's schemas, a problem's place named (retrieval.search_request)."""

from __future__ import annotations

from pathlib import Path

import pytest

from curation.retrieval.search_request import SearchRequest, Where, resolve
from curation.schemas import PO


def test_a_request_is_checked_against_the_schemas_with_its_place_named():
    schema, request = resolve(SearchRequest("po", {"gene": "BRAF"}), {"PO": PO}, Where())
    assert schema is PO and dict(request.values) == {"Gene": "BRAF"}
    with pytest.raises(Exception, match=r"q.jsonl.*line 4.*not a slot of PO"):
        resolve(SearchRequest("PO", {"Colour": "red"}), {"PO": PO}, Where(Path("q.jsonl"), 4))
