"""Entities: lexicons, synonyms, dictionaries, variants (every notation), PTMs, abbreviations, matching, normalisation.

Owns: EDEL's text-matching function g(e, d) (``matching.Matcher``), the typed-name normaliser, and the
notation grammars it uses; the learned entity linker (``linking``); gold mentions as concept-index rows
(``gold``); which annotator serves: the active recogniser and linker, or the dictionaries (``served_annotator``);
a corpus annotated in batch and written as PubTator or JSON lines (``batch_annotation``).
The matcher kept between processes (``matcher_cache``: the lexicon, its names as ``phrase_table`` holds them and
the normaliser's ``fuzzy_index``, named by a digest of the store's inputs; ``kept_abbreviations``: what each
abstract defines, named by its text).
May import: curation.store (dictionaries are read from the store), curation.training_loop (the name encoder's
fine-tuning), index.encoder (the linker's name encoder) and the vocabulary.
"""
