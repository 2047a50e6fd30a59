"""The matcher's analysis of a text: the spaCy pass over it, its dictionary hits, abbreviations and notation rule hits.

:class:`TextAnalyser` holds what :class:`~curation.entities.matching.Matcher` reads a text with: the pipeline
(``spacy.blank("en")`` and scispaCy's abbreviation detector, made on first use), the phrase matchers over the
lexicon's names (:mod:`curation.entities.phrase_table`), and an LRU cache of :class:`Analysis`, one per text, so
scoring thousands of (record, abstract) pairs costs one spaCy pass per abstract. A text whose abbreviations are kept
(:mod:`curation.entities.kept_abbreviations`) needs no spaCy pass until its dictionary hits are asked for.
"""

from __future__ import annotations

import threading
import time
import warnings
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from curation.entities.abbreviations import Abbreviation, find_abbreviations
from curation.entities.hits import Hit
from curation.entities.kept_abbreviations import text_digest
from curation.entities.lexicon import Lexicon
from curation.entities.phrase_table import NameTable, name_matchers, name_table, one_token, tokenizer_exceptions
from curation.entities.ptm import find_ptms, find_residues
from curation.entities.variants import find_variants

if TYPE_CHECKING:
    from spacy.language import Language

# scispaCy's detector runs an empty spaCy Matcher on texts without abbreviations (W036).
QUIET = r".*\[W036\]"


@dataclass
class Analysis:
    """What the analyser knows about one text. Held in the analyser's cache: the rule fields are memoised on first
    use, and only the analyser and the matcher read the object."""

    text: str
    abbreviations: tuple[Abbreviation, ...] = ()
    dictionary: list[Hit] | None = None  # None: not found yet (the abbreviations were kept; spaCy did not run)
    variants: list[Hit] | None = None
    extras: dict[str, list[Hit]] = field(default_factory=dict)


class TextAnalyser:
    """Analyses texts once each for :class:`~curation.entities.matching.Matcher` (its base class).

    Args:
        lexicon: names by kind (see :mod:`curation.entities.synonyms`).
        nlp: a spaCy pipeline to use for tokens (default ``spacy.blank("en")``); the
            scispaCy ``abbreviation_detector`` is added when ``abbreviations`` is set.
        abbreviations: find abbreviation definitions in the text.
        cache_size: how many analysed texts to keep.
        names: the lexicon's names as :func:`~curation.entities.phrase_table.name_table` tokenized them (a kept
            copy, :mod:`curation.entities.matcher_cache`); None: tokenized here. Ignored with another ``nlp``.
    """

    def __init__(
        self,
        lexicon: Lexicon,
        nlp: Language | None = None,
        abbreviations: bool = True,
        cache_size: int = 4096,
        names: NameTable | None = None,
    ) -> None:
        self.lexicon = lexicon
        self.use_abbreviations = abbreviations
        self._given_nlp = nlp
        self.names = names
        self._nlp: Language | None = None
        self._prepare_lock = threading.Lock()
        self._cache: OrderedDict[str, Analysis] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()  # the abbreviation detector keeps state per call
        self.last_foreground = 0.0  # time.monotonic() of the last analysis a caller waited for (not analyse_many)
        # text digest -> the abbreviations the text defines, as this matcher's default pipeline finds them, kept
        # between processes (curation.entities.kept_abbreviations): such a text needs no spaCy pass for g(e, d).
        self.kept_abbreviations: Mapping[str, tuple[Abbreviation, ...]] = {}
        if nlp is not None or names is None:  # the names are tokenized now: spaCy is needed at once
            self._prepare()
        # With a kept name table, spaCy (~4 s to import) waits for the first text to read: a command that only
        # links typed names and reads the store's concept index never loads it.

    @property
    def nlp(self) -> Language:
        """The spaCy pipeline the texts are tokenized with (made on first use)."""
        return self._prepare()

    def _prepare(self) -> Language:
        """Make the pipeline and the phrase matchers over the names, once (thread-safe); returns the pipeline."""
        if self._nlp is not None:
            return self._nlp
        with self._prepare_lock:
            if self._nlp is None:
                import spacy

                nlp = self._given_nlp if self._given_nlp is not None else spacy.blank("en")
                if self.use_abbreviations and "abbreviation_detector" not in nlp.pipe_names:
                    import scispacy.abbreviation  # noqa: F401  (registers the factory)

                    nlp.add_pipe("abbreviation_detector")
                self._exceptions = tokenizer_exceptions(nlp) if self._given_nlp is None else None
                if self.names is None or self._exceptions is None:  # another tokenizer: its own table, never kept
                    self.names = name_table(self.lexicon, nlp, self._exceptions)
                self._exact, self._lower, self._one_token_names = name_matchers(nlp, self.names)
                self._nlp = nlp
        return self._nlp

    def _one_token(self, name: str) -> bool:
        """Whether the default tokenizer keeps ``name`` whole (:func:`~curation.entities.phrase_table.one_token`)."""
        return one_token(self.nlp, name, self._exceptions)

    def analyse_many(self, texts: Iterable[str], batch_size: int = 64) -> None:
        """Warm the cache for many texts with ``nlp.pipe`` (faster than one at a time), dictionary hits included."""
        todo = [t for t in dict.fromkeys(texts) if t and (t not in self._cache or self._cache[t].dictionary is None)]
        if not todo:
            return
        with self._lock, warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=QUIET)
            for text, doc in zip(todo, self.nlp.pipe(todo, batch_size=batch_size), strict=True):
                self._store(text, self._from_doc(text, doc))

    # --- analysis ---------------------------------------------------------------------

    def _analyse(self, text: str, foreground: bool = True) -> Analysis:
        if foreground:
            self.last_foreground = time.monotonic()  # a warming loop (analyse_many in the background) steps aside
        with self._lock, warnings.catch_warnings():
            cached = self._cache.get(text)
            if cached is not None:
                self._cache.move_to_end(text)
                return cached
            kept = self._kept(text)
            if kept is not None:
                analysis = Analysis(text, kept)
            else:
                warnings.filterwarnings("ignore", message=QUIET)
                analysis = self._from_doc(text, self.nlp(text))
            self._store(text, analysis)
        return analysis

    def _kept(self, text: str) -> tuple[Abbreviation, ...] | None:
        """The text's kept abbreviations, when this matcher's pipeline is the one they were found with (else None)."""
        if not self.kept_abbreviations or not self._keeps_abbreviations():
            return None
        return self.kept_abbreviations.get(text_digest(text))

    def _keeps_abbreviations(self) -> bool:
        # Kept abbreviations are those of the default pipeline with the detector (what build_matcher makes).
        return self._given_nlp is None and self.use_abbreviations

    def unkept(self, texts: Iterable[str]) -> list[str]:
        """The texts (once each) whose abbreviations are not kept: g(e, d) on them needs a spaCy pass."""
        return [t for t in dict.fromkeys(texts) if t and self._kept(t) is None]

    def abbreviations_of(self, texts: Iterable[str]) -> dict[str, tuple[Abbreviation, ...]]:
        """The abbreviations each text defines, by text digest (what can be kept): read from what is kept or cached,
        else analysed now. {} for a matcher with another pipeline or without abbreviations."""
        if not self._keeps_abbreviations():
            return {}
        return {text_digest(text): self._analyse(text, foreground=False).abbreviations for text in texts if text}

    def _store(self, text: str, analysis: Analysis) -> None:
        self._cache[text] = analysis
        while len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)

    def _from_doc(self, text: str, doc) -> Analysis:
        analysis = Analysis(text, find_abbreviations(doc, text, digits=self.use_abbreviations))
        matches = [(m, "exact") for m in self._exact(doc)] + [(m, "lower") for m in self._lower(doc)]
        for how, names in self._one_token_names.items():
            for token in doc:
                for label in names.get(token.text if how == "exact" else token.lower_, ()):
                    matches.append(((label, token.i, token.i + 1), how))
        matches.sort(key=lambda m: (m[1] != "exact", m[0][1], m[0][2]))  # as the phrase matchers order them
        hits = []
        for (label, start, end), _ in matches:
            span = doc[start:end]
            kind = self.nlp.vocab.strings[label]
            concept = self._concept(span.text, kind)
            hits.append(Hit(span.start_char, span.end_char, kind, concept, "dictionary"))
        analysis.dictionary = hits
        return analysis

    def _concept(self, name: str, kind: str) -> str:
        found = self.lexicon.lookup(name, kind)
        return found[0][1] if found else name

    def _dictionary(self, analysis: Analysis) -> list[Hit]:
        if analysis.dictionary is None:  # analysed from its kept abbreviations: spaCy runs now
            with self._lock, warnings.catch_warnings():
                warnings.filterwarnings("ignore", message=QUIET)
                analysis.dictionary = self._from_doc(analysis.text, self.nlp(analysis.text)).dictionary
        return analysis.dictionary or []

    def _variants(self, analysis: Analysis) -> list[Hit]:
        if analysis.variants is None:
            analysis.variants = [
                Hit(v.start, v.end, "variant", v.key, "variant") for v in find_variants(analysis.text)
            ]
        return analysis.variants

    def _ptms(self, analysis: Analysis) -> list[Hit]:
        if "ptm" not in analysis.extras:
            analysis.extras["ptm"] = [Hit(p.start, p.end, "ptm", p.key, "ptm") for p in find_ptms(analysis.text)]
        return analysis.extras["ptm"]

    def _residues(self, analysis: Analysis, one_letter: bool) -> list[Hit]:
        key = f"residue{int(one_letter)}"
        if key not in analysis.extras:
            found = find_residues(analysis.text, one_letter=one_letter)
            analysis.extras[key] = [Hit(r.start, r.end, "residue", r.key, "residue") for r in found]
        return analysis.extras[key]
