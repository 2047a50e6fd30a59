"""Drug code names (PLX4032, STI571, AZD9291) mined from the store's own text.

No installed vocabulary carries a drug's development codes: DrugBank's open vocabulary and the drug NER
package list generic and brand names only. Papers and KB evidence name them beside the generic name,
"vemurafenib (PLX4032)" or "PLX4032 (vemurafenib)", so the store's abstracts and its KB records' text
(CIViC's evidence statements) give the pairs. A pair is kept when one side is a name of exactly one
chemical concept in the store and the other has the shape of a code: two to five capitals, an optional
hyphen or space, three to seven digits, an optional letter. That shape leaves out protein changes
(H1047R, L858R: one letter) and cytokines (IL-10: two digits). A code that pairs with two drugs, or is
already a name of a concept of another kind (a gene), is left out.

The ``ingest-dict`` kind ``drug-code-names`` files each kept code under its drug's concept, so typing
"PLX4032" links vemurafenib. Run it after the corpora, the KB and the drug vocabularies are in.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping

import duckdb

from curation.entities.lexicon import normalise_name
from curation.records import Synonym

KIND = "drug-code-names"
SOURCE = "drug-code-names"
CHEMICAL = "chemical"
_CODE = r"[A-Z]{2,5}[- ]?\d{3,7}[A-Z]?"
_NAME = r"[A-Za-z][\w-]{3,}"
# "generic (CODE" and "CODE (generic": the parenthesis closes, or a list of other names follows.
_FORWARD = re.compile(rf"(?<![\w-])({_NAME})\s*\(\s*({_CODE})\s*[,;)]")
_REVERSE = re.compile(rf"(?<![\w-])({_CODE})\s*\(\s*({_NAME})\s*[,;)]")
MIN_TEXT = 40  # a KB attribute shorter than this is a value (a level, an id), not a sentence
SQL_DOCUMENT_TEXT = "SELECT title || ' ' || abstract FROM documents"
SQL_KB_ATTRIBUTES = "SELECT attributes FROM kb_records"


def code_pairs(texts: Iterable[str], owners: Mapping[str, frozenset[str]]) -> Counter[tuple[str, str]]:
    """(code, concept id) -> how many times a text pairs them.

    Args:
        texts: free text (abstracts, evidence statements).
        owners: normalised chemical name -> the concept ids it names; only names of exactly one concept count.
    """
    pairs: Counter[tuple[str, str]] = Counter()
    for text in texts:
        for name, code in [(m.group(1), m.group(2)) for m in _FORWARD.finditer(text)] + [
            (m.group(2), m.group(1)) for m in _REVERSE.finditer(text)
        ]:
            found = owners.get(normalise_name(name), frozenset())
            if len(found) == 1:
                pairs[(" ".join(code.split()), next(iter(found)))] += 1
    return pairs


def code_synonyms(pairs: Mapping[tuple[str, str], int], taken: Mapping[str, frozenset[str]]) -> list[Synonym]:
    """The codes that pair with one drug only and name nothing of another kind, as chemical synonyms.

    ``taken``: normalised name -> the kinds of the concepts it already names in the store.
    """
    drugs: dict[str, set[str]] = defaultdict(set)
    spelled: dict[str, str] = {}
    for code, concept in pairs:
        key = normalise_name(code)
        drugs[key].add(concept)
        spelled.setdefault(key, code)
    return [Synonym(next(iter(found)), CHEMICAL, spelled[key], SOURCE)
            for key, found in sorted(drugs.items())
            if len(found) == 1 and not (taken.get(key, frozenset()) - {CHEMICAL})]


def store_texts(con: duckdb.DuckDBPyConnection) -> Iterator[str]:
    """The store's abstracts (title and text) and the sentences of its KB records' attributes."""
    for (text,) in con.execute(SQL_DOCUMENT_TEXT).fetchall():
        yield text
    for (attributes,) in con.execute(SQL_KB_ATTRIBUTES).fetchall():
        values = json.loads(attributes) if isinstance(attributes, str) else attributes
        for value in (values or {}).values() if isinstance(values, dict) else ():
            if isinstance(value, str) and len(value) >= MIN_TEXT:
                yield value


def mined_code_synonyms(con: duckdb.DuckDBPyConnection) -> list[Synonym]:
    """The drug code names the store's text pairs with a chemical the store already names."""
    owners: dict[str, set[str]] = defaultdict(set)
    taken: dict[str, set[str]] = defaultdict(set)
    for kind, concept, name in con.execute("SELECT kind, concept_id, name FROM synonyms").fetchall():
        key = normalise_name(name)
        taken[key].add(kind)
        if kind == CHEMICAL:
            owners[key].add(concept)
    frozen = {key: frozenset(found) for key, found in owners.items()}
    return code_synonyms(code_pairs(store_texts(con), frozen), {key: frozenset(k) for key, k in taken.items()})
