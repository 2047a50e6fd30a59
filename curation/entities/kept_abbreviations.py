"""The abbreviations each abstract defines, kept between processes: a search reads them instead of loading spaCy.

Of a text, g(e, d) (:meth:`~curation.entities.matching.Matcher.matches`) needs one thing that spaCy computes: the
abbreviations it defines (scispaCy's detector over spaCy's tokens, :mod:`curation.entities.abbreviations`); names,
notations and categories are regular expressions over the text. Importing spaCy, scispaCy and (through thinc) torch
and building the phrase matchers took 3-4 s of every CLI search and of an app restart's first search on 2 cores.
What the matcher found over the corpus (:func:`curation.runtime.matcher.build_matcher`, the app's warming) is kept
as JSON (never a pickle) in ``<cache_dir>/abbreviations-<key>.json``: per text, named by its BLAKE2b digest, its
abbreviations (``[]`` for a text that defines none).

Entries are named by the text itself, so a change of the store never makes one wrong: a text that is not in the
file (an abstract ingested since) is analysed with spaCy as before, and the next warming keeps it. The key covers
what else decides them: the code of abbreviations.py, spaCy's and scispaCy's versions (tokenizer, detector) and the
format; a file of another key is not read. The file is written whole and renamed into place
(:func:`curation.files.write_atomic`).
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Mapping
from pathlib import Path

from curation.entities import abbreviations
from curation.entities.abbreviations import Abbreviation
from curation.files import write_atomic

FORMAT = 1  # bump when the file's content, or how it is read, changes
PREFIX = "abbreviations-"
KEPT_TEXTS = 20_000  # abstracts whose abbreviations are kept (all of a corpus this size; ~2 ms each to analyse)

Kept = Mapping[str, tuple[Abbreviation, ...]]  # text digest -> the abbreviations the text defines


def text_digest(text: str) -> str:
    """The name of a text's entry: its BLAKE2b digest (16 bytes, hex)."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def abbreviations_key() -> str:
    """The digest a kept file is named by (see the module docstring)."""
    from importlib.metadata import PackageNotFoundError, version  # the versions without importing spaCy (~4 s)

    hasher = hashlib.sha256(f"abbreviations format {FORMAT}\n".encode())
    for package in ("spacy", "scispacy"):
        try:
            hasher.update(f"{package} {version(package)}\n".encode())
        except PackageNotFoundError:
            hasher.update(f"{package} absent\n".encode())
    hasher.update(Path(abbreviations.__file__).read_bytes())
    return hasher.hexdigest()


def kept_path(cache_dir: Path) -> Path:
    return Path(cache_dir) / f"{PREFIX}{abbreviations_key()[:32]}.json"


def read_abbreviations(cache_dir: Path | None) -> dict[str, tuple[Abbreviation, ...]]:
    """The kept abbreviations in ``cache_dir`` ({} when there are none for this code and these versions; a damaged
    file is said on standard error and not used)."""
    if cache_dir is None:
        return {}
    path = kept_path(cache_dir)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        print(f"the kept abbreviations {path} are not used ({exc})", file=sys.stderr)
        return {}
    try:
        if data["format"] != FORMAT or data["key"] != abbreviations_key():
            return {}
        return {str(digest): tuple(map(_abbreviation, found)) for digest, found in data["texts"].items()}
    except (KeyError, TypeError, ValueError) as exc:
        print(f"the kept abbreviations {path} are not used (unreadable content: {exc})", file=sys.stderr)
        return {}


def _abbreviation(entry: list) -> Abbreviation:
    short, start, end, uses = entry
    return Abbreviation(str(short), int(start), int(end), tuple((int(s), int(e)) for s, e in uses))


def write_abbreviations(cache_dir: Path, kept: Kept) -> Path:
    """Write ``kept`` as the file of this key in ``cache_dir`` (replacing it whole); files of other keys are removed.

    Raises:
        OSError: the folder cannot be written.
    """
    cache_dir = Path(cache_dir)
    cache_dir.mkdir(parents=True, exist_ok=True)
    path = kept_path(cache_dir)
    data = {"format": FORMAT, "key": abbreviations_key(),
            "texts": {digest: [[a.short, a.long_start, a.long_end, [list(o) for o in a.occurrences]] for a in found]
                      for digest, found in sorted(kept.items())}}
    write_atomic(path, json.dumps(data, separators=(",", ":")))
    for old in cache_dir.glob(f"{PREFIX}*.json"):
        if old != path:
            old.unlink(missing_ok=True)
    return path

