"""The dictionaries' matcher kept between processes: the same matches as a matcher built from tokenized names,
a new kept copy when the store's inputs change, and a damaged or stale copy rebuilt, never used."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from curation.entities import matcher_cache
from curation.entities.dictionaries import build_lexicon, ingest_dictionary
from curation.entities.lexicon import Lexicon
from curation.entities.matcher_cache import (
    KeptMatcher,
    StaleMatcher,
    load_matcher,
    matcher_key,
    read_kept,
    write_kept,
)
from curation.entities.matching import Matcher
from curation.entities.name_patterns import case_sensitive
from curation.entities.normalise import Normaliser
from curation.entities.synonyms import drugbank_synonyms, element_synonyms, mention_synonyms, ptm_synonyms
from curation.entities.variants import variant_keys
from curation.ingest.problems import Problems
from curation.ingest.pubtator import read_pubtator
from curation.workflows.ingestion import ingest_corpus, ingest_kb

DRUGBANK = """Column1;Column2;Column3;Column4;Column5;Column6;Column7
DrugBank ID;Accession Numbers;Common name;CAS;UNII;Synonyms;Standard InChI Key
DB08881;;Vemurafenib;918504-65-1;;PLX4032 | RG7204 | Zelboraf;
"""


def _tokenized_phrase_matchers(matcher: Matcher):
    """The phrase matchers as the matcher built them before names were kept: every phrase tokenized into a Doc."""
    from spacy.matcher import PhraseMatcher

    nlp = matcher.nlp
    exact, lower = PhraseMatcher(nlp.vocab, attr="ORTH"), PhraseMatcher(nlp.vocab, attr="LOWER")
    per_kind: dict[str, dict[str, set[str]]] = {}
    for kind in matcher.lexicon.kinds:
        if kind in ("ptm", "residue"):
            continue
        names = per_kind.setdefault(kind, {"exact": set(), "lower": set()})
        for synonym in matcher.lexicon.entries(kind):
            name = synonym.name
            if kind == "variant" and (len(name) < 4 or variant_keys(name)):
                continue
            (names["exact"].add(name) if case_sensitive(name) else names["lower"].add(name.lower()))
    counts = {how: Counter(n for names in per_kind.values() for n in names[how]) for how in ("exact", "lower")}
    for kind, names in per_kind.items():
        for (how, each), phrase_matcher in zip(names.items(), (exact, lower), strict=True):
            phrases = [n for n in sorted(each) if not (counts[how][n] == 1 and matcher._one_token(n))]
            phrase_matcher.add(kind, list(nlp.tokenizer.pipe(phrases)))
    return exact, lower


def _real_lexicon(data_dir) -> tuple[Lexicon, list]:
    """DrugBank's names, BioRED Train's and BC5CDR Train's gold names; texts: BioRED Dev + 200 BC5CDR Dev abstracts."""
    def read(path):
        return list(read_pubtator(path, Problems(path)))

    train = read(data_dir / "biored" / "Train.PubTator") + read(data_dir / "bc5cdr" / "CDR_TrainingSet.PubTator.txt")
    synonyms = list(drugbank_synonyms(data_dir / "dicts" / "drugbank_vocabulary.csv"))
    synonyms += mention_synonyms([m for d in train for m in d.mentions]) + ptm_synonyms() + element_synonyms()
    texts = [d.text for d in read(data_dir / "biored" / "Dev.PubTator")]
    texts += [d.text for d in read(data_dir / "bc5cdr" / "CDR_DevelopmentSet.PubTator.txt")[:200]]
    return Lexicon(synonyms), texts


def test_a_kept_matcher_finds_what_the_tokenized_names_find_on_real_abstracts(data_dir, tmp_path):
    lexicon, texts = _real_lexicon(data_dir)
    built = Matcher(lexicon)
    write_kept(tmp_path / "matcher-x", "key", KeptMatcher(lexicon, built.names))
    kept = read_kept(tmp_path / "matcher-x", "key").matcher()
    reference = Matcher(lexicon)
    reference._exact, reference._lower = _tokenized_phrase_matchers(reference)  # names tokenized, as before

    assert json.dumps(kept.lexicon.to_state()) == json.dumps(lexicon.to_state())  # every table, every order
    assert kept.lexicon.sizes() == lexicon.sizes() and kept.lexicon.dropped == lexicon.dropped
    assert len(texts) >= 300
    spans = 0
    for text in texts:
        found = kept.find_all(text)
        assert found == reference.find_all(text) == built.find_all(text)
        spans += len(found)
        for probe in ("Vemurafenib", "cisplatin", "BRAF", "breast cancer"):
            assert kept.matches(probe, "chemical", text) == reference.matches(probe, "chemical", text)
    assert spans > 3000  # the abstracts are matched, not skipped
    fresh, read = Normaliser(lexicon), Normaliser(kept.lexicon, kept=kept.kept_fuzzy)
    assert set(kept.kept_fuzzy) == {"chemical", "disease", "gene", "ptm", "variant"} & set(lexicon.kinds)
    for typed in ("vemurafinib", "doxorubicn", "breast cancr", "BRAF V600", "cisplatinum", "phosphorylated"):
        assert read.normalise(typed) == fresh.normalise(typed)
        assert read.normalise(typed, kind="chemical") == fresh.normalise(typed, kind="chemical")
    for name in ("PLX4032", "doxorubicin", "tamoxifen", "nitric oxide", "ERBB2"):
        for kind in (None, "chemical", "gene"):
            assert kept.lexicon.lookup(name, kind) == lexicon.lookup(name, kind)
            assert kept.lexicon.lookup_loose(name, kind or "gene") == lexicon.lookup_loose(name, kind or "gene")


@pytest.fixture
def loaded(con, fixtures):
    ingest_kb(con, "civic", fixtures / "civic" / "current.tsv")
    ingest_corpus(con, "pubtator", fixtures / "pubtator" / "small.PubTator")
    return con


def _counting_builds(monkeypatch) -> list[int]:
    builds: list[int] = []
    real = matcher_cache.build_kept

    def build(con, cache_dir):
        builds.append(1)
        return real(con, cache_dir)

    monkeypatch.setattr(matcher_cache, "build_kept", build)
    return builds


def test_the_kept_matcher_is_read_until_the_store_s_inputs_change(loaded, tmp_path, monkeypatch):
    cache = tmp_path / "lexicon"
    builds = _counting_builds(monkeypatch)
    first = load_matcher(loaded, cache)
    (folder,) = cache.glob("matcher-*")
    again = load_matcher(loaded, cache)  # a restart, another command: read, not built
    assert builds == [1]
    assert again.lexicon.sizes() == first.lexicon.sizes() == build_lexicon(loaded).sizes()
    text = "Patients with BRAF V600E melanoma received vemurafenib."
    assert again.find_all(text) == first.find_all(text) == Matcher(build_lexicon(loaded)).find_all(text)

    drugbank = tmp_path / "drugbank.csv"
    drugbank.write_text(DRUGBANK)
    key = matcher_key(loaded)
    ingest_dictionary(loaded, "drugbank", drugbank)  # new inputs: a new digest, a new build
    assert matcher_key(loaded) != key
    fresh = load_matcher(loaded, cache)
    assert builds == [1, 1] and len(list(cache.glob("matcher-*"))) == 2
    assert fresh.lexicon.lookup("PLX4032", "chemical") and not first.lexicon.lookup("PLX4032", "chemical")
    assert fresh.matches("Vemurafenib", "chemical", "PLX4032 was given")

    key = matcher_key(loaded)
    loaded.execute("UPDATE synonyms SET name = 'PLX-4032' WHERE name = 'PLX4032'")  # an edited row, same count
    assert matcher_key(loaded) != key
    edited = load_matcher(loaded, cache)
    assert builds == [1, 1, 1] and edited.lexicon.lookup("PLX-4032", "chemical")
    assert len(list(cache.glob("matcher-*"))) == 3 == matcher_cache.KEEP and folder.exists()


@pytest.mark.parametrize("damage", ["checksum", "truncated", "manifest", "format", "missing file"])
def test_a_damaged_or_stale_kept_matcher_is_rebuilt_never_used(loaded, tmp_path, monkeypatch, capsys, damage):
    cache = tmp_path / "lexicon"
    load_matcher(loaded, cache)
    (folder,) = cache.glob("matcher-*")
    key = matcher_key(loaded)
    lexicon_file, manifest_file = folder / "lexicon.json", folder / "manifest.json"
    if damage == "checksum":  # same size, one name changed: only the checksum tells
        lexicon_file.write_text(lexicon_file.read_text().replace('"BRAF"', '"BRAG"', 1))
    elif damage == "truncated":
        lexicon_file.write_bytes(lexicon_file.read_bytes()[:100])
    elif damage == "manifest":
        manifest_file.write_text("{not json")
    elif damage == "format":
        manifest = json.loads(manifest_file.read_text())
        manifest_file.write_text(json.dumps({**manifest, "format": matcher_cache.FORMAT + 1}))
    else:
        (folder / "names.json").unlink()
    with pytest.raises(StaleMatcher):
        read_kept(folder, key)

    builds = _counting_builds(monkeypatch)
    matcher = load_matcher(loaded, cache)
    assert builds == [1]  # rebuilt, and said so
    assert "not used" in capsys.readouterr().err
    assert matcher.lexicon.lookup("BRAF", "gene") and not matcher.lexicon.lookup("BRAG", "gene")
    read_kept(folder, key)  # written again, sound
    load_matcher(loaded, cache)
    assert builds == [1]


def test_a_kept_matcher_of_other_inputs_is_not_read(loaded, tmp_path):
    cache = tmp_path / "lexicon"
    load_matcher(loaded, cache)
    (folder,) = cache.glob("matcher-*")
    with pytest.raises(StaleMatcher, match="other inputs"):
        read_kept(folder, "another key")


def test_a_damaged_kept_name_index_is_fitted_again(loaded, tmp_path, capsys):
    matcher = load_matcher(loaded, tmp_path / "lexicon")
    path, _ = matcher.kept_fuzzy["chemical"]
    expected = Normaliser(matcher.lexicon).normalise("vemurafinib", kind="chemical")
    assert Normaliser(matcher.lexicon, kept=matcher.kept_fuzzy).normalise("vemurafinib", kind="chemical") == expected
    path.write_bytes(path.read_bytes()[:-8] + b"\0" * 8)  # same size, other bytes
    damaged = Normaliser(matcher.lexicon, kept=matcher.kept_fuzzy)
    assert damaged.normalise("vemurafinib", kind="chemical") == expected and expected
    assert "not used" in capsys.readouterr().err
