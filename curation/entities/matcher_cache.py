"""The dictionaries' matcher kept between processes, so that a restart or a CLI command does not build it again.

Building the matcher from the store reads ~430k synonyms, measures the names on the annotated abstracts
(:func:`~curation.entities.dictionaries.excluded_names`) and tokenizes every phrase: 20-35 s on 2 cores, paid by
every app start and every CLI command. What it produces is kept as plain JSON (never a pickle) in
``<cache_dir>/matcher-<digest>/``: the filtered lexicon's tables (:meth:`~curation.entities.lexicon.Lexicon.to_state`,
every order kept), the names as the matcher adds them (:class:`~curation.entities.phrase_table.NameTable`, phrases
as token hashes), the normaliser's TF-IDF index of each kind (:mod:`curation.entities.fuzzy_index`) and a
manifest with their checksums.

The digest covers every input: the store's rows the lexicon reads (:func:`~curation.store.lexicon_inputs.
lexicon_inputs_digest`), the ``curation/entities`` code, spaCy's version (its tokenizer) and the format. A new
ingest makes a new digest, hence a miss and a rebuild; a folder whose manifest, format, digest or file checksums
do not match is never used: it is rebuilt in its place. The folder is written beside its final name and renamed
into place, so a reader sees a whole copy or none, and a read-only command can write it (nothing goes into the
store).
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import islice
from pathlib import Path

import duckdb

from curation.entities.abbreviations import Abbreviation
from curation.entities.dictionaries import lexicon_sources, measured_exclusions
from curation.entities.fuzzy_index import save_fuzzy
from curation.entities.kept_abbreviations import KEPT_TEXTS, read_abbreviations, write_abbreviations
from curation.entities.lexicon import Lexicon
from curation.entities.matching import Matcher
from curation.entities.normalise import Normaliser
from curation.entities.phrase_table import NameTable, name_table, tokenizer_exceptions
from curation.store.corpus import iter_documents
from curation.store.lexicon_inputs import lexicon_inputs_digest

FORMAT = 1  # bump when what the folder holds, or how it is read, changes
KEEP = 3  # kept folders (a few store states back: each ingest makes a new digest)
FILES = ("lexicon.json", "names.json")
KEEP_CHUNK = 1_000  # abstracts analysed at a time when their abbreviations are kept (within any matcher's cache)


class StaleMatcher(Exception):
    """A kept matcher that must not be used: missing, of another format or digest, or damaged (the reason)."""


@dataclass(frozen=True)
class KeptMatcher:
    """What a matcher is made of: the filtered lexicon, its names as the matcher adds them and, when read from a
    folder, the normaliser's TF-IDF files per kind (file, checksum), read when a fuzzy query first needs one."""

    lexicon: Lexicon
    names: NameTable
    fuzzy: Mapping[str, tuple[Path, str]] = field(default_factory=dict)

    def matcher(self, cache_size: int = 4096) -> Matcher:
        """The matcher of this lexicon and these names (the default tokenizer, abbreviations, vetoes and shapes)."""
        matcher = Matcher(self.lexicon, cache_size=cache_size, names=self.names)
        matcher.kept_fuzzy = dict(self.fuzzy)
        return matcher


def matcher_key(con: duckdb.DuckDBPyConnection) -> str:
    """The digest a store's kept matcher is named by (see the module docstring)."""
    hasher = hashlib.sha256(f"matcher format {FORMAT}\nspacy {_spacy_version()}\n".encode())
    for source in sorted(Path(__file__).parent.glob("*.py")):  # the matching code: a change there is a miss
        hasher.update(source.read_bytes())
    hasher.update(lexicon_inputs_digest(con).encode())
    return hasher.hexdigest()


def _spacy_version() -> str:
    """spaCy's version without importing spaCy (~4 s), read over a copy of ``sys.path``: the app reads it in a
    background thread while Streamlit's script runs insert and remove their folder there, and a search over the
    list itself could skip site-packages ("No package metadata was found for spacy")."""
    from importlib.metadata import PackageNotFoundError, distributions

    for found in distributions(name="spacy", path=list(sys.path)):
        return found.version
    raise PackageNotFoundError("spacy")


def load_matcher(con: duckdb.DuckDBPyConnection, cache_dir: Path | None, cache_size: int = 4096,
                 freeze: bool = False) -> Matcher:
    """The store's dictionary matcher: from its kept copy in ``cache_dir`` when there is a sound one for the store
    as it is, else built from the store (the names measured, or read from ``cache_dir``) and kept there.

    ``cache_dir`` None: built, never kept. A folder that cannot be written only costs the next start the build.
    The abbreviations kept in ``cache_dir`` (:mod:`curation.entities.kept_abbreviations`) come with it; a build (a
    new store state: an ingest, or nothing kept) also keeps those of the abstracts not kept yet.

    ``freeze``: for a process that keeps the matcher (the app, a search command): what is read is frozen out of the
    collector's passes (``gc.freeze``) before the collector runs again. Otherwise its first collections walk the
    ~10^6 new objects (0.5 s with the GIL held, at a restart's first search); a settle (or the process's end)
    frees what was frozen with them.
    """
    if cache_dir is None:
        return build_kept(con, None).matcher(cache_size)
    matcher, built = _load_or_build(con, Path(cache_dir), cache_size, freeze)
    with paused_collector(freeze):  # ~10^4 small tuples, read beside the lexicon's 10^6 objects
        matcher.kept_abbreviations = read_abbreviations(cache_dir)
    if built:
        keep_abbreviations(matcher, cache_dir, [d.text for d in islice(iter_documents(con), KEPT_TEXTS)])
    return matcher


def _load_or_build(con: duckdb.DuckDBPyConnection, cache_dir: Path, cache_size: int,
                   freeze: bool) -> tuple[Matcher, bool]:
    """The matcher, and whether it was built (not read)."""
    key = matcher_key(con)
    folder = Path(cache_dir) / f"matcher-{key[:32]}"
    try:
        with paused_collector(freeze):
            return read_kept(folder, key).matcher(cache_size), False
    except StaleMatcher as exc:
        if folder.exists():
            print(f"the kept dictionary matcher {folder} is not used ({exc}): building it again", file=sys.stderr)
    kept = build_kept(con, Path(cache_dir))
    try:
        write_kept(folder, key, kept)
        with paused_collector(freeze):
            return read_kept(folder, key).matcher(cache_size), True  # with the name indexes just fitted
    except (OSError, StaleMatcher) as exc:
        print(f"the dictionary matcher could not be kept in {folder} ({exc})", file=sys.stderr)
    return kept.matcher(cache_size), True


@contextmanager
def paused_collector(freeze: bool = False) -> Iterator[None]:
    """No garbage collection inside: reading ~10^6 small lists and dicts otherwise runs the collector's full passes
    over them again and again (measured: 6.4 s of a 7 s read under load; 0.9 s without). Nothing read here is
    garbage, and the collector runs again at the end; with ``freeze``, once what exists is frozen (the block ended
    without an error)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
        if freeze:
            gc.freeze()  # moves the collector's lists, walks nothing
    finally:
        if was_enabled:
            gc.enable()


def build_kept(con: duckdb.DuckDBPyConnection, cache_dir: Path | None) -> KeptMatcher:
    """Build what a matcher is made of from the store: the lexicon (names measured on the annotated abstracts,
    their exclusions read from ``cache_dir`` when measured before) and its tokenized names."""
    import spacy

    synonyms, annotated = lexicon_sources(con)
    lexicon = Lexicon(synonyms, exclude=measured_exclusions(synonyms, annotated, cache_dir))
    nlp = spacy.blank("en")  # the matcher's default tokenizer
    return KeptMatcher(lexicon, name_table(lexicon, nlp, tokenizer_exceptions(nlp)))


def read_kept(folder: Path, key: str) -> KeptMatcher:
    """The kept matcher in ``folder``, checked against ``key`` and its manifest's checksums.

    Raises:
        StaleMatcher: the folder is missing, of another format or digest, or a file is missing or damaged.
    """
    try:
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise StaleMatcher(f"no readable manifest: {exc}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT or manifest.get("key") != key:
        raise StaleMatcher("another format or other inputs")
    data = {}
    for name in FILES:
        try:
            raw = (folder / name).read_bytes()
        except OSError as exc:
            raise StaleMatcher(f"{name}: {exc}") from None
        if hashlib.sha256(raw).hexdigest() != manifest.get("files", {}).get(name):
            raise StaleMatcher(f"{name} does not match its checksum")
        data[name] = raw
    try:
        lexicon = Lexicon.from_state(json.loads(data["lexicon.json"]))
        names = NameTable.from_json(json.loads(data["names.json"]))
        # Checked when first read (Normaliser.tfidf): most commands never need most kinds.
        fuzzy = {str(kind): (folder / name, str(manifest["files"][name])) for kind, name in manifest["fuzzy"].items()}
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise StaleMatcher(f"unreadable content: {exc}") from None
    return KeptMatcher(lexicon, names, fuzzy)


def write_kept(folder: Path, key: str, kept: KeptMatcher) -> None:
    """Write ``kept`` as ``folder`` (built beside it, then renamed into place); older folders beyond
    :data:`KEEP` are removed."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
    try:
        contents = {
            "lexicon.json": json.dumps(kept.lexicon.to_state()).encode(),
            "names.json": json.dumps(kept.names.to_json()).encode(),
        }
        fuzzy = _fuzzy_files(kept.lexicon)
        contents.update({f"fuzzy-{index}.npz": raw for index, (_, raw) in enumerate(fuzzy)})
        for name, raw in contents.items():
            (stage / name).write_bytes(raw)
        manifest = {
            "format": FORMAT, "key": key, "created": datetime.now(UTC).isoformat(timespec="seconds"),
            "files": {name: hashlib.sha256(raw).hexdigest() for name, raw in contents.items()},
            "fuzzy": {kind: f"fuzzy-{index}.npz" for index, (kind, _) in enumerate(fuzzy)},
            "counts": {"lexicon_names": len(kept.lexicon), "matcher_names": sum(
                len(g.one_token) + len(g.phrases) for g in kept.names.groups)},
        }
        (stage / "manifest.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")
        if folder.exists():  # damaged or stale under the same name: moved aside, then removed
            aside = folder.with_name(f".{folder.name}-old-{os.getpid()}")
            folder.rename(aside)
            shutil.rmtree(aside, ignore_errors=True)
        stage.rename(folder)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    _prune(folder.parent)


def _fuzzy_files(lexicon: Lexicon) -> list[tuple[str, bytes]]:
    """(kind, .npz bytes) of the normaliser's TF-IDF index of every kind with names, fitted now."""
    normaliser = Normaliser(lexicon)
    out = []
    for kind in lexicon.kinds:
        vectoriser, matrix, _ = normaliser.tfidf(kind)
        if vectoriser is not None:
            out.append((kind, save_fuzzy(vectoriser, matrix, normaliser.ngram_range)))
    return out


def _prune(cache_dir: Path) -> None:
    kept = sorted(cache_dir.glob("matcher-*"), key=lambda p: p.stat().st_mtime)
    for old in kept[:-KEEP]:
        shutil.rmtree(old, ignore_errors=True)


def keep_abbreviations(matcher: Matcher, cache_dir: Path | None, texts: Sequence[str]) -> None:
    """Keep the abbreviations of ``texts`` (the corpus's first :data:`KEPT_TEXTS`) in ``cache_dir``: those kept already
    are read, the others analysed now (spaCy, ~2 ms each); written when that changes what is kept. A folder that
    cannot be written only costs the next process the analysis."""
    if cache_dir is None:
        return
    texts = list(dict.fromkeys(t for t in texts[:KEPT_TEXTS] if t))
    kept: dict[str, tuple[Abbreviation, ...]] = {}
    for start in range(0, len(texts), KEEP_CHUNK):
        chunk = texts[start:start + KEEP_CHUNK]
        matcher.analyse_many(matcher.unkept(chunk))  # batched: faster than one text at a time
        kept.update(matcher.abbreviations_of(chunk))
    if kept.keys() == matcher.kept_abbreviations.keys():
        return  # an entry's content is decided by its text: the same texts, the same file
    try:
        write_abbreviations(cache_dir, kept)
    except OSError as exc:
        print(f"the abbreviations could not be kept in {cache_dir} ({exc})", file=sys.stderr)
        return
    matcher.kept_abbreviations = kept
