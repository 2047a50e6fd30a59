"""CIViC clinical evidence exports (current and 2018 "v1" schema) into PO records.

Decisions this loader makes, and why:

* **One record per (gene, variant, therapy)**. A row lists its therapies comma-separated;
  each therapy becomes its own record (all share the evidence id, the interaction type and
  the full therapy list as attributes), because EDEL's text matching and the curator's answer
  are per treatment.
* **Records without a therapy are kept** with an empty answer (diagnostic, prognostic,
  predisposing evidence). EDEL does not turn them into positives, but they are a source of
  KB-matching negatives ("same gene and variant, no treatment").
* **Records without a PubMed citation (ASCO / ASH abstracts) are kept** with ``pmid=None``
  and the citation in the attributes: they are real knowledge but give no query-document pair.
* **Multi-variant molecular profiles** ("BRAF V600E AND BRAF V600M",
  "BCR::ABL1 Fusion AND ( ABL1 F317L OR ABL1 F317V )") are split into their component
  variants, one record per component, each keeping the full profile in the
  ``molecular_profile`` attribute and ``profile_operator`` AND / OR. The evidence abstract is
  about every component, so each (gene, variant) query should find it. Components after NOT
  are dropped: the evidence is about their absence.
* **Fusions** "EML4::ALK Fusion" have gene = the 3' partner (ALK), the partner CIViC
  attaches fusions to, and variant = the profile text ("EML4::ALK Fusion").
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from curation.ingest.problems import Problems
from curation.ingest.tabular import ascii_digits, open_text_lines, read_tsv, valid_pmid
from curation.records import KBRecord

CURRENT_REQUIRED = ("molecular_profile", "therapies", "citation_id", "source_type", "evidence_id")
V1_REQUIRED = ("gene", "variant", "drugs", "pubmed_id", "evidence_id")

CURRENT_ATTRIBUTES = (
    ("evidence_type", "evidence_type"),
    ("evidence_level", "evidence_level"),
    ("evidence_direction", "evidence_direction"),
    ("significance", "significance"),
    ("disease", "disease"),
    ("doid", "doid"),
    ("variant_origin", "variant_origin"),
    ("rating", "rating"),
    ("evidence_status", "evidence_status"),
    ("therapy_interaction_type", "therapy_interaction_type"),
    ("citation", "citation"),
    ("evidence_statement", "evidence_statement"),
)
V1_ATTRIBUTES = (
    ("evidence_type", "evidence_type"),
    ("evidence_level", "evidence_level"),
    ("evidence_direction", "evidence_direction"),
    ("significance", "clinical_significance"),
    ("disease", "disease"),
    ("doid", "doid"),
    ("variant_origin", "variant_origin"),
    ("rating", "rating"),
    ("evidence_status", "evidence_status"),
    ("citation", "citation"),
    ("evidence_statement", "evidence_statement"),
    ("entrez_id", "entrez_id"),
)

_OPERATOR = re.compile(r"\s+(AND|OR)\s+")


def split_profile(profile: str) -> tuple[list[tuple[str, str]], str]:
    """Split a molecular profile into (gene, variant) components and its operator.

    >>> split_profile("BRAF V600E AND ( BRAF V600K OR NOT NRAS Q61K )")
    ([('BRAF', 'V600E'), ('BRAF', 'V600K')], 'AND')
    """
    text = profile.replace("(", " ").replace(")", " ").strip()
    operators = _OPERATOR.findall(text)
    parts = _OPERATOR.sub("\x00", text).split("\x00") if operators else [text]
    negated = [" ".join(p.split()).startswith("NOT ") for p in parts]
    components = []
    for part, is_negated in zip(parts, negated, strict=True):
        part = " ".join(part.split())
        if is_negated:
            if not all(negated):
                continue
            # A profile that is only a negation ("NOT KIT D816V") is still evidence about that variant.
            part = part[len("NOT ") :].strip()
        if not part:
            continue
        gene, _, variant = part.partition(" ")
        if "::" in gene:
            # Fusions: CIViC attaches them to the 3' partner; "v" stands for any 5' partner.
            variant = f"{gene} {variant}".strip()
            gene = gene.split("::")[-1]
        components.append((gene, variant))
    operator = operators[0] if operators else ("NOT" if all(negated) and components else "")
    return components, operator


def _therapies(value: str) -> list[str]:
    seen: list[str] = []
    for name in value.split(","):
        name = name.strip()
        if name and name not in seen:
            seen.append(name)
    return seen


def read_civic(path: Path, problems: Problems) -> Iterator[KBRecord]:
    """Read either CIViC export schema (detected from the header) into PO records."""
    path = Path(path)
    # The header through the same reader as the rows, so a gzip-compressed export is detected too.
    lines = open_text_lines(path, Problems(path, lenient=True))
    try:
        first = next(lines, (1, ""))[1]
    finally:
        lines.close()
    header = first.lstrip("\ufeff").split("\t")
    if "molecular_profile" in header:
        yield from _read_current(path, problems)
    elif "variant" in header and "drugs" in header:
        yield from _read_v1(path, problems)
    else:
        # Let the generic reader produce the precise message (delimiter or missing columns).
        yield from _read_current(path, problems)


def _record(
    gene: str, variant: str, therapy: str, pmid: str | None, source_id: str, attributes: tuple[tuple[str, str], ...]
) -> KBRecord:
    return KBRecord(
        schema="PO",
        entities=(("Gene", gene), ("Variant", variant), ("Treatment", therapy)),
        pmid=pmid,
        source="civic",
        source_id=source_id,
        attributes=attributes,
    )


def _read_current(path: Path, problems: Problems) -> Iterator[KBRecord]:
    for line, row in read_tsv(path, problems, CURRENT_REQUIRED):
        evidence_id = row["evidence_id"].strip()
        if not ascii_digits(evidence_id):
            problems.report(line, "evidence_id", f"'{evidence_id}' is not a CIViC evidence id (digits)")
            continue
        profile = row["molecular_profile"].strip()
        components, operator = split_profile(profile)
        if not components or any(not gene or not variant for gene, variant in components):
            problems.report(line, "molecular_profile", f"'{profile}' is not 'GENE VARIANT' (or AND/OR of them)")
            continue
        citation, source_type = row["citation_id"].strip(), row["source_type"].strip()
        pmid: str | None = None
        if source_type == "PubMed":
            if not valid_pmid(citation):
                problems.report(line, "citation_id", f"'{citation}' is not a PubMed id (1 to 9 digits)")
                continue
            pmid = citation
        attributes = tuple((name, row.get(column, "").strip()) for name, column in CURRENT_ATTRIBUTES) + (
            ("molecular_profile", profile),
            ("profile_operator", operator),
            ("therapies", row["therapies"].strip()),
            ("source_type", source_type),
            ("citation_id", citation),
            ("evidence_url", row.get("evidence_civic_url", "").strip()),
            ("updated", row.get("last_review_date", "").strip()),
        )
        therapies = _therapies(row["therapies"]) or [""]
        for index, (gene, variant) in enumerate(components):
            for therapy in therapies:
                source_id = f"EID{evidence_id}"
                if len(components) > 1:
                    source_id += f":{index}"
                if therapy:
                    source_id += f":{therapy}"
                yield _record(gene, variant, therapy, pmid, source_id, attributes)


def _read_v1(path: Path, problems: Problems) -> Iterator[KBRecord]:
    for line, row in read_tsv(path, problems, V1_REQUIRED):
        evidence_id = row["evidence_id"].strip()
        if not ascii_digits(evidence_id):
            problems.report(line, "evidence_id", f"'{evidence_id}' is not a CIViC evidence id (digits)")
            continue
        gene, variant = row["gene"].strip(), row["variant"].strip()
        if not gene or not variant:
            problems.report(line, "gene" if not gene else "variant", "is empty")
            continue
        pmid = row["pubmed_id"].strip() or None
        if pmid is not None and not valid_pmid(pmid):
            problems.report(line, "pubmed_id", f"'{pmid}' is not a PubMed id (1 to 9 digits)")
            continue
        attributes = tuple((name, row.get(column, "").strip()) for name, column in V1_ATTRIBUTES) + (
            ("therapies", row["drugs"].strip()),
            ("source_type", "PubMed" if pmid else ""),
            ("evidence_url", row.get("evidence_civic_url", "").strip()),
            ("updated", row.get("last_review_date", "").strip()),
        )
        for therapy in _therapies(row["drugs"]) or [""]:
            source_id = f"EID{evidence_id}" + (f":{therapy}" if therapy else "")
            yield _record(gene, variant, therapy, pmid, source_id, attributes)
