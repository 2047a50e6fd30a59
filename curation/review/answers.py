"""A curator's typed answer, checked: is it the schema's kind of entity, and does the abstract name it?

:func:`answer_kind_problem` is what a decision checks before it is written (a gene given as a treatment
is questioned; the curator may confirm it: ``curation.workflows.curate``); :func:`check_answer` is what a
result card shows under the answer as it is typed (linked as a query slot is, and looked for in the abstract).
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb

from curation.entities.lexicon import Lexicon
from curation.entities.matching import Matcher
from curation.entities.query import QueryError, QueryLinker
from curation.schemas import RelationSchema
from curation.store.corpus import get_documents


def answer_kind_problem(lexicon: Lexicon, schema: RelationSchema, answer: str) -> str | None:
    """Why ``answer`` looks like the wrong kind of entity for the schema's answer, or None.

    Conservative on purpose: only a name the lexicon knows as some other kind and never as the
    answer's kind is questioned. A name it does not know passes (new names are what curators
    add), and so does a schema whose answer kind is "generic".
    """
    expected = schema.kind(schema.answer)
    answer = " ".join(answer.split())
    if not answer or expected == "generic":
        return None
    kinds = sorted({kind for kind, _ in lexicon.lookup(answer)})
    if not kinds or expected in kinds:
        return None
    return (
        f"'{answer}' is known as a {' and '.join(kinds)} name, not a {expected}, but the {schema.answer} of a "
        f"{schema.name} relation is a {expected}. Pick the {expected} the abstract names, or record it anyway "
        "if the dictionaries are wrong about this name"
    )


@dataclass(frozen=True)
class AnswerCheck:
    """A typed answer as the search would read it, and whether the abstract names it.

    Attributes:
        answer: the answer as typed (spacing tidied).
        status: "linked", "offered" (a suggestion waits: searched as typed) or "unknown", as a query slot's.
        concept_ids: the concepts it links to (empty unless linked).
        canonical: the linked concept's display name (the answer itself when not linked).
        how: how it was linked ("exact", "notation", "linker", ...), "" when not linked.
        suggestions: the dictionaries' close names when it is not linked, best first.
        mentioned: whether the abstract writes it (any name or notation of its concepts).
        forms: how the abstract writes it, in text order.
        problem: a sentence for the curator when the answer is not mentioned or cannot be read, else "".
    """

    answer: str
    status: str
    concept_ids: tuple[str, ...] = ()
    canonical: str = ""
    how: str = ""
    suggestions: tuple[str, ...] = ()
    mentioned: bool = False
    forms: tuple[str, ...] = ()
    problem: str = ""

    @property
    def linked(self) -> bool:
        return self.status == "linked"


def check_answer(
    con: duckdb.DuckDBPyConnection, matcher: Matcher, linker: QueryLinker, schema: RelationSchema, pmid: str,
    answer: str,
) -> AnswerCheck:
    """Normalise a curator's answer as a query slot is (:meth:`QueryLinker.link`) and look for it in the abstract.

    The abstract is searched with the matcher's g(e, d) for the linked name (every name and notation of
    its concepts) or, when it is not linked, for the answer as typed. Never raises for what was typed:
    an answer that cannot be read (a passage, not a name) comes back with ``problem`` saying why.
    """
    kind = schema.kind(schema.answer)
    text = " ".join(answer.split())
    try:
        concept = linker.link(schema.answer, text, kind, species=schema.species)
    except QueryError as exc:
        return AnswerCheck(text, "unknown", canonical=text, problem=str(exc))
    suggestions = () if concept.linked else tuple(dict.fromkeys(c.canonical for c in concept.alternatives))[:3]
    documents = get_documents(con, [pmid])
    if not documents:
        return AnswerCheck(concept.typed, concept.status, concept.concept_ids, concept.canonical, concept.how,
                           suggestions, problem=f"PMID {pmid} is not in the store, so the answer cannot be checked")
    name = concept.canonical if concept.linked and not concept.codon else concept.typed
    spans = matcher.matches(name, kind, documents[0])
    forms = tuple(dict.fromkeys(s.text for s in spans))
    problem = ""
    if not spans:
        shown = f"'{concept.typed}'" + (f" ({concept.canonical})" if concept.canonical != concept.typed else "")
        names = " or any other name of it" if concept.linked else ""
        problem = (f"The abstract of PMID {pmid} does not mention {shown}{names}; check that it is this abstract's "
                   f"{schema.answer.lower()}")
        if suggestions:
            problem += ". Did you mean " + ", ".join(f"'{s}'" for s in suggestions) + "?"
    return AnswerCheck(concept.typed, concept.status, concept.concept_ids, concept.canonical, concept.how,
                       suggestions, bool(spans), forms, problem)
