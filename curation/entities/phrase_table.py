"""The dictionary names as the matcher adds them: one-token names by text, the rest as token-hash phrases.

:class:`~curation.entities.matching.Matcher` finds dictionary names with two spaCy ``PhraseMatcher`` (exact case and
lower case) and, for the names its tokenizer keeps as one token, a dict lookup per token. Tokenizing ~10^5 phrases
is most of a matcher's build, so :func:`name_table` does it once and :class:`NameTable` keeps the result as plain
data: per kind and case, the one-token names and each phrase's token hashes (``ORTH`` or ``LOWER``, spaCy's 64-bit
string hashes), in the order they are added. ``PhraseMatcher.add`` takes such hash sequences as patterns, so a
matcher loaded from a kept table (:mod:`curation.entities.matcher_cache`) is the same matcher, ties included: the
phrase matcher reports the kinds of one span in the order of its hash table, which the order of ``add`` decides.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

from curation.entities.lexicon import Lexicon
from curation.entities.name_patterns import case_sensitive
from curation.entities.variants import variant_keys

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.matcher import PhraseMatcher

HOWS = ("exact", "lower")  # the PhraseMatcher attributes ORTH and LOWER, in the order they are added
_SPACE = re.compile(r"\s")
_PLAIN = re.compile(r"[A-Za-z](?:[A-Za-z0-9]*[0-9]|[A-Za-z]*)")  # no letters after a digit at the end


@dataclass(frozen=True)
class NameGroup:
    """The names of one kind matched one way ("exact" or "lower"), in the order they are added.

    Attributes:
        kind: the matcher kind ("gene", "chemical", ...).
        how: "exact" (matched on token text) or "lower" (on lower-cased token text; names lower-cased).
        one_token: names the default tokenizer keeps as one token, looked up per token.
        phrases: every other name as its tokens' hashes (``ORTH`` for exact, ``LOWER`` for lower).
    """

    kind: str
    how: str
    one_token: tuple[str, ...]
    phrases: tuple[tuple[int, ...], ...]


@dataclass(frozen=True)
class NameTable:
    """Every dictionary name of a lexicon as the matcher adds it (see the module docstring)."""

    groups: tuple[NameGroup, ...]

    def to_json(self) -> dict:
        """Plain JSON data (lists of strings and integers), read back by :meth:`from_json`."""
        return {"groups": [{"kind": g.kind, "how": g.how, "one_token": list(g.one_token),
                            "phrases": [list(p) for p in g.phrases]} for g in self.groups]}

    @classmethod
    def from_json(cls, data: dict) -> NameTable:
        """The table :meth:`to_json` wrote. Raises KeyError, TypeError or ValueError on another shape."""
        groups = []
        for group in data["groups"]:
            if group["how"] not in HOWS:
                raise ValueError(f"unknown match attribute {group['how']!r}")
            # Checked by the kept copy's checksums, not per value: ~10^6 values, read on every start.
            phrases = tuple(map(tuple, group["phrases"]))
            groups.append(NameGroup(str(group["kind"]), group["how"], tuple(group["one_token"]), phrases))
        return cls(tuple(groups))


def one_token(nlp: Language, name: str, exceptions: frozenset[str] | None) -> bool:
    """Whether the default tokenizer keeps ``name`` as one token: no space, no exception in any case, and
    none of its prefix, suffix or infix rules applies ("Cyp2g" is "Cyp2" + the unit "g"; "ERBB2" is one).

    ``exceptions``: the tokenizer's special cases, lower-cased; None for another tokenizer, whose rules are not
    assumed (every name is then a phrase).
    """
    if exceptions is None or not name or _SPACE.search(name) or name.lower() in exceptions:
        return False
    if _PLAIN.fullmatch(name):  # only a unit after a digit splits letters and digits; the rules are slow
        return True
    tokenizer = nlp.tokenizer
    return not (tokenizer.prefix_search(name) or tokenizer.suffix_search(name)
                or next(tokenizer.infix_finditer(name), None))


def tokenizer_exceptions(nlp: Language) -> frozenset[str]:
    """The tokenizer's special cases, lower-cased (what :func:`one_token` checks first)."""
    return frozenset(r.lower() for r in nlp.tokenizer.rules)


def name_table(lexicon: Lexicon, nlp: Language, exceptions: frozenset[str] | None) -> NameTable:
    """Every dictionary name of ``lexicon`` as the matcher adds it, tokenized by ``nlp``'s tokenizer.

    PTMs and residues are found by rule, with more forms than a dictionary holds; variant names that are
    notation or categories too (or shorter than 4 characters). Short or mixed-case names are matched by exact
    case, the rest lower-cased (:func:`~curation.entities.name_patterns.case_sensitive`). A name of several
    kinds stays a phrase: the phrase matcher's order of its kinds decides ties downstream.
    """
    per_kind: dict[str, dict[str, set[str]]] = {}  # kind -> how -> names
    for kind in lexicon.kinds:
        if kind in ("ptm", "residue"):
            continue
        exact, lower = per_kind.setdefault(kind, {"exact": set(), "lower": set()}).values()
        for synonym in lexicon.entries(kind):
            name = synonym.name
            if kind == "variant" and (len(name) < 4 or variant_keys(name)):
                continue
            (exact.add(name) if case_sensitive(name) else lower.add(name.lower()))
    counts = {how: Counter(n for names in per_kind.values() for n in names[how]) for how in HOWS}
    groups = []
    for kind, names in per_kind.items():
        for how in HOWS:
            alone, phrases = [], []
            for name in sorted(names[how]):
                if counts[how][name] == 1 and one_token(nlp, name, exceptions):
                    alone.append(name)
                else:
                    phrases.append(name)
            docs = nlp.tokenizer.pipe(phrases)
            hashes = [tuple(t.orth if how == "exact" else t.lower for t in doc) for doc in docs]
            groups.append(NameGroup(kind, how, tuple(alone), tuple(h for h in hashes if h)))
    return NameTable(tuple(groups))


def name_matchers(nlp: Language, names: NameTable
                  ) -> tuple[PhraseMatcher, PhraseMatcher, dict[str, dict[str, list[int]]]]:
    """The matcher's lookups over ``names`` in ``nlp``'s vocabulary: the ORTH and LOWER phrase matchers (token-hash
    patterns: the same trie as the tokenized names give, without tokenizing them again), and the one-token names (most
    gene symbols) by token text and by lower-cased text (the phrase matchers' matches without tokenizing ~10^5 names),
    each name to its kind's label."""
    from spacy.matcher import PhraseMatcher  # noqa: F811 (the run-time import; the one above is for types)

    exact, lower = PhraseMatcher(nlp.vocab, attr="ORTH"), PhraseMatcher(nlp.vocab, attr="LOWER")
    one_token_names: dict[str, dict[str, list[int]]] = {how: {} for how in HOWS}
    for group in names.groups:
        label = nlp.vocab.strings.add(group.kind)
        # A one-token name has one kind (name_table keeps a name of several kinds a phrase): no list to extend.
        one_token_names[group.how].update({name: [label] for name in group.one_token})
        (exact if group.how == "exact" else lower).add(group.kind, list(group.phrases))
    return exact, lower, one_token_names
