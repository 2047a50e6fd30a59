"""Knowledge base: import KB files and corpora (the same code as the CLI), see what the store holds."""

from __future__ import annotations

import shutil

import streamlit as st

from curation.errors import USER_ERRORS
from curation.workflows import team
from curation.workflows.export import FORMATS, civic_suggestions, export_decisions, export_new_records
from curation.workflows.ingestion import CORPUS_FORMATS, KB_FORMATS, check_upload_size, ingest_corpus, ingest_kb
from curation.workflows.session import schema_or_first, schemas, store_counts
from pages.parts.common import annotator, connection, who
from pages.parts.highlight import escape_text
from pages.parts.legacy_runner import leave_legacy_runner
from pages.parts.sample_loader import sample_action
from pages.parts.schema_editor import schema_section
from pages.parts.uploads import save_upload

leave_legacy_runner(__file__)  # first, before anything is drawn (see pages/parts/legacy_runner.py)

st.title("Knowledge base")
con = connection()
if con is None:
    st.stop()

counts = store_counts(con)
acting = who()
can_import = team.may(con, acting, team.Action.IMPORT)
if can_import:
    if counts["kb_records"] == 0 or counts["documents"] == 0:
        st.info(
            "This store is empty or half-loaded. Load the sample in one click, or your own knowledge base and "
            "abstracts with the forms below (or `python -m curation quickstart`, `ingest-kb`, `ingest-corpus` from "
            "a terminal while the app is stopped)."
        )
        sample_action(con, key="sample_kb_empty")
    else:
        with st.expander("Sample data"):
            sample_action(con, key="sample_kb")

left, right = st.columns(2)
left.metric("KB records", counts["kb_records"])
left.caption(", ".join(f"{k}: {v}" for k, v in counts["kb_records_by_schema"].items()) or "no records yet")
right.metric("Abstracts", counts["documents"])
right.caption(f"{counts['mentions']} gold mentions · {counts['kb_records_with_abstract']} KB records with an abstract")


def run_import(kind: str, fmt: str, upload, schema: str | None, lenient: bool) -> None:
    # Messages name the file as uploaded, never the temporary copy; they quote the file's text,
    # so they are shown escaped (plain text, no Markdown).
    try:
        check_upload_size(upload.name, upload.size)
        path = save_upload(upload)
    except USER_ERRORS as exc:
        st.error(f"Nothing was imported. {escape_text(str(exc))}")
        return
    except OSError as exc:
        st.error(f"Nothing was imported. Could not save the upload: {escape_text(exc.strerror or str(exc))}")
        return
    bar = st.progress(0.0, text=f"reading {upload.name}")

    def progress(done: int) -> None:
        bar.progress(min(0.95, done / (done + 2000)), text=f"{done} rows read")

    try:
        if kind == "kb":
            report = ingest_kb(con, fmt, path, schema=schema, lenient=lenient, progress=progress, who=acting)
        else:
            report = ingest_corpus(con, fmt, path, lenient=lenient, progress=progress,
                                   annotator=lambda: annotator(con).annotator, who=acting)
    except USER_ERRORS as exc:
        bar.empty()
        st.error(f"Nothing was imported. {escape_text(str(exc).replace(str(path), upload.name))}")
        return
    finally:
        shutil.rmtree(path.parent, ignore_errors=True)  # the private copy is not kept
    bar.progress(1.0, text="done")
    st.success(escape_text(report.summary().replace(str(path), upload.name)))
    for label, messages in (("skipped rows", report.skipped), ("warnings", report.warnings)):
        if messages:
            with st.expander(f"{len(messages)} {label}"):
                st.text("\n".join(s.replace(str(path), upload.name) for s in messages[:500]))


if can_import:
    with st.form("import_kb"):
        st.subheader("Import a knowledge base")
        fmt = st.selectbox(
            "Format",
            KB_FORMATS,
            help="civic: CIViC evidence TSV; uniprot: UniProtKB flat file; tsv: one column per entity type of a "
            "schema; civic-suggestions: the CIViC source-suggestion CSV this page exports",
        )
        schema = st.selectbox("Schema (for tsv)", [s.name for s in schemas(con)])
        upload = st.file_uploader("File", key="kb_file")
        lenient = st.checkbox("Skip bad rows instead of stopping", key="kb_lenient")
        if st.form_submit_button("Import knowledge base") and upload is not None:
            run_import("kb", fmt, upload, schema, lenient)

    with st.form("import_corpus"):
        st.subheader("Import abstracts")
        fmt = st.selectbox(
            "Format",
            CORPUS_FORMATS,
            help="pubtator: BioRED / BC5CDR; pubmed-xml: efetch or baseline XML; jsonl: {pmid, title, abstract} per "
            "line",
        )
        upload = st.file_uploader("File", key="corpus_file")
        lenient = st.checkbox("Skip bad rows instead of stopping", key="corpus_lenient")
        if st.form_submit_button("Import abstracts") and upload is not None:
            run_import("corpus", fmt, upload, None, lenient)
    schema_section(con, acting)
else:
    st.caption("Importing into the shared store, and loading the sample, is for the maintainer role.")

if not team.may(con, acting, team.Action.EXPORT):
    st.stop()
st.subheader("Export curators' work")
schema_name = st.session_state.get("schema") or "PO"
export_schema = schema_or_first(con, schema_name)
fmt = st.radio("Format", FORMATS, horizontal=True, key="export_format")
left, right = st.columns(2)
left.download_button(
    "Decisions", export_decisions(con, fmt, who=acting), file_name=f"decisions.{fmt}", mime="text/plain",
    key="export_decisions",
)
right.download_button(
    f"New {export_schema.name} KB records",
    export_new_records(con, export_schema, fmt, who=acting),
    file_name=f"new_records_{export_schema.name}.{fmt}",
    mime="text/plain",
    key="export_records",
)
mine = st.toggle("Only my decisions", key="export_mine", disabled=not st.session_state.get("curator"))
suggestions = civic_suggestions(con, curator=st.session_state.get("curator") if mine else None, who=acting)
st.download_button(
    "CIViC source suggestions (CSV)", suggestions.text, file_name="civic_source_suggestions.csv", mime="text/csv",
    key="export_suggestions", disabled=not suggestions.rows,
    help="PubMed id, gene, variant, disease, therapy and a comment per accepted abstract: the fields of CIViC's "
    "'suggest a source' form. Import it back with the format civic-suggestions.",
)
st.caption(escape_text(f"CIViC source suggestions: {suggestions.summary()}"))
