"""The names a query uses, in three forms built from the same records.

* ``verbatim``: the evidence documents' own mention texts (the most frequent over the query's
  documents). Every such query quotes its gold documents; kept so old and new figures compare. A
  concept the evidence names only inside a composite mention ("CDKN2A/B") takes its canonical name.
* ``canonical``: one name per concept for the whole corpus, the way a KB writes it (the headline
  form). A variant is named from its normalised id (``p|SUB|V|600|E`` → ``V600E``,
  ``c|SUB|C|643|T`` → ``c.643C>T``; an rs id → its most frequent protein-change mention, else the
  rs id); any other concept → its most frequent mention text over the corpus, counted once per
  document (ties: more mentions, then the alphabetically first).
* ``reworded``: per query entity, a different name of the same concept: a mention text of it in
  other documents or, for a variant, another notation (one- or three-letter, with or without
  ``p.``/``c.``). A name that occurs in any of the query's evidence documents is never chosen when
  another exists; the choice among the rest is a hash of the seed and the query, so it is
  deterministic and independent of what else is in the benchmark.

Names come from mentions annotated with one id only: a composite mention ("MODY" for three genes)
names none of its genes well.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence

from curation.entities.variant_notations import notations
from curation.entities.variants import normalise_variant
from curation.learning.benchmark.corpus import ENTITY_TYPES, concept_parts
from curation.records import Document, Synonym

FORM_NAMES = ("verbatim", "canonical", "reworded")
_PROTEIN = re.compile(r"([A-Z])(\d+)([A-Z*])")


class Names:
    """Every name the corpus gives each concept, and the three forms built from them.

    Args:
        documents: the annotated documents (BioRED, BC5CDR); a PMID seen twice counts once.
        dictionary: chemical synonyms (DrugBank). A chemical whose most used corpus name is a name of
            exactly one dictionary entry takes that entry's common name as canonical. The entry's other
            names are not used for rewording: a dictionary lists names no curator types (foreign-language
            and systematic ones), so reworded names come from what other documents write.
    """

    def __init__(self, documents: Iterable[Document], dictionary: Iterable[Synonym] = ()) -> None:
        # (type, id) -> text -> [documents using it, mentions]
        self._usage: dict[tuple[str, str], dict[str, list[int]]] = defaultdict(dict)
        # (pmid, type, id) -> Counter of texts in that document
        self._in_doc: dict[tuple[str, str, str], Counter[str]] = defaultdict(Counter)
        self._shared: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
        self._texts: dict[str, str] = {}  # pmid -> casefolded text, for the "not in the evidence" rule
        seen: set[str] = set()
        for document in documents:
            if document.pmid in seen:
                continue
            seen.add(document.pmid)
            self._texts[document.pmid] = document.text.casefold()
            per_doc: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
            for mention in document.mentions:
                entity_type = ENTITY_TYPES.get(mention.type)
                parts = concept_parts(mention.concept_id, mention.type)
                text = " ".join(mention.text.split())
                if entity_type is None or not text:
                    continue
                if len(parts) == 1:
                    per_doc[(entity_type, parts[0])][text] += 1
                else:  # a composite mention names its concepts only when nothing else does
                    for part in parts:
                        self._shared[(entity_type, part)][text] += 1
            for key, texts in per_doc.items():
                self._in_doc[(document.pmid, *key)].update(texts)
                for text, count in texts.items():
                    usage = self._usage[key].setdefault(text, [0, 0])
                    usage[0] += 1
                    usage[1] += count
        self._canonical: dict[tuple[str, str], str] = {}
        self._dictionary: dict[str, str] = {}  # chemical id -> the dictionary's common name
        if dictionary:
            self._link_dictionary(dictionary)

    # --- the three forms ----------------------------------------------------------------

    def canonical(self, entity_type: str, concept: str) -> str:
        """One name per concept for the whole corpus."""
        key = (entity_type, concept)
        if key not in self._canonical:
            name = variant_name(concept) if entity_type == "Variant" else None
            if name is None and entity_type == "Variant" and concept.startswith("rs"):
                name = self._rs_name(concept)
            if name is None and key[1] in self._dictionary and entity_type == "Chemical":
                name = self._dictionary[key[1]]
            shared = self._shared.get(key)
            fallback = most_frequent(shared) if shared else concept
            self._canonical[key] = name or self._most_used(key) or fallback
        return self._canonical[key]

    def reworded(self, entity_type: str, concept: str, pmids: Sequence[str], salt: str) -> tuple[str, bool]:
        """(a name of the concept not used by the evidence documents, whether one was found).

        When every name occurs in an evidence document, the canonical name is returned with False.
        """
        candidates = self.alternatives(entity_type, concept)
        fresh = [name for name in candidates if not any(self.occurs(name, pmid) for pmid in pmids)]
        if not fresh:
            return self.canonical(entity_type, concept), False
        return fresh[_pick(salt, len(fresh))], True

    # --- helpers ------------------------------------------------------------------------

    def alternatives(self, entity_type: str, concept: str) -> list[str]:
        """Every name of the concept (sorted): its mention texts, and a variant's other notations."""
        names = set(self._usage.get((entity_type, concept), {}))
        if entity_type == "Chemical" and concept in self._dictionary:
            names.add(self._dictionary[concept])
        if entity_type == "Variant":
            for name in [self.canonical(entity_type, concept), *names]:
                names.update(notations(name))
        return sorted(names)

    def occurs(self, name: str, pmid: str) -> bool:
        """Whether ``name`` occurs as a word sequence in the document (case-insensitive)."""
        text = self._texts.get(pmid, "")
        needle = name.casefold()
        at = text.find(needle)
        while at >= 0:
            before = text[at - 1] if at > 0 else " "
            after = text[at + len(needle)] if at + len(needle) < len(text) else " "
            if not (before.isalnum() or after.isalnum()):
                return True
            at = text.find(needle, at + 1)
        return False

    def mentions_in(self, pmid: str, entity_type: str, concept: str) -> Counter[str]:
        return Counter(self._in_doc.get((pmid, entity_type, concept), Counter()))

    @property
    def dictionary_links(self) -> int:
        """How many chemicals were linked to a dictionary entry."""
        return len(self._dictionary)

    def _link_dictionary(self, dictionary: Iterable[Synonym]) -> None:
        entries: dict[str, list[Synonym]] = defaultdict(list)
        owners: dict[str, set[str]] = defaultdict(set)
        for synonym in dictionary:
            entries[synonym.concept_id].append(synonym)
            owners[synonym.name.casefold()].add(synonym.concept_id)
        for (entity_type, concept) in list(self._usage):
            if entity_type != "Chemical":
                continue
            name = self._most_used((entity_type, concept))
            ids = owners.get(name.casefold(), set()) if name else set()
            if len(ids) != 1:
                continue
            synonyms = entries[next(iter(ids))]
            self._dictionary[concept] = next((s.name for s in synonyms if s.canonical), synonyms[0].name)

    def _most_used(self, key: tuple[str, str]) -> str | None:
        usage = self._usage.get(key)
        if not usage:
            return None
        return min(usage, key=lambda text: (-usage[text][0], -usage[text][1], text))

    def _rs_name(self, concept: str) -> str | None:
        usage = self._usage.get(("Variant", concept), {})
        protein: Counter[str] = Counter()
        for text, (documents, _) in usage.items():
            key = normalise_variant(text)
            if key and _PROTEIN.fullmatch(key):
                protein[key] += documents
        if not protein:
            return None
        return most_frequent(protein)


def most_frequent(counts: Mapping[str, int]) -> str:
    """The most frequent key; a tie goes to the alphabetically first, so every choice is deterministic."""
    return min(counts, key=lambda key: (-counts[key], key))


def variant_name(variant_id: str) -> str | None:
    """A KB-style name for a BioRED (tmVar) variant id, or None when it is not one.

    ``p|SUB|V|600|E`` → ``V600E``; ``c|SUB|C|643|T`` → ``c.643C>T``; ``c|DEL|528|T`` → ``c.528del``
    (the project's variant normaliser writes the key; deletions drop the deleted bases).
    """
    fields = variant_id.split("|")
    if len(fields) < 3 or fields[0] not in ("p", "c", "g"):
        return None
    level, change = fields[0], fields[1].upper()
    rest = fields[2:]
    if change == "SUB" and len(rest) >= 3:
        ref, position, alt = rest[0], rest[1], rest[2]
        text = f"{ref}{position}{alt}" if level == "p" else f"{level}.{position}{ref}>{alt}"
        if level == "p" and len(rest) >= 4 and rest[3]:
            text = f"p.{ref}{position}{alt}fs*{rest[3]}"
    elif change in ("DEL", "INS", "DUP", "INDEL") and rest[0]:
        op = {"INDEL": "delins"}.get(change, change.lower())
        text = f"{level}.{rest[0]}{op}{rest[1] if len(rest) > 1 else ''}"
    elif change == "FS" and len(rest) >= 2:
        text = f"p.{rest[0]}{rest[1]}fs"
    else:
        return None
    return normalise_variant(text) or text


def _pick(salt: str, n: int) -> int:
    return int.from_bytes(hashlib.sha256(salt.encode()).digest()[:8], "big") % n

