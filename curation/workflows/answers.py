"""A typed answer on the Curate page: the warning a decision raises, and the check drawn under the answer.

The checks themselves are :mod:`curation.review.answers`'.
"""

from __future__ import annotations

import duckdb

from curation.entities.matching import Matcher
from curation.entities.query import QueryLinker
from curation.errors import CurationError
from curation.review import answers
from curation.schemas import RelationSchema


class AnswerKindError(CurationError):
    """The answer is a name the dictionaries know only as another kind of entity (a warning to confirm)."""


def check_answer(
    con: duckdb.DuckDBPyConnection, matcher: Matcher, linker: QueryLinker, schema: RelationSchema, pmid: str,
    answer: str,
) -> answers.AnswerCheck:
    """The answer as a query slot would read it, and whether the abstract of ``pmid`` names it (never raises for
    what was typed: :func:`curation.review.answers.check_answer`)."""
    return answers.check_answer(con, matcher, linker, schema, pmid, answer)
