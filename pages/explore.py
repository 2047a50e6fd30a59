"""Explore embeddings: documents and queries of a model version on a 2-D map, two versions side by side."""

from __future__ import annotations

import html

import plotly.express as px
import streamlit as st

from curation.config import load_settings
from curation.errors import USER_ERRORS
from curation.grades import Grade
from curation.workflows.projection import (
    DOCUMENT,
    NONE,
    OTHER,
    QUERY,
    UNDECIDED,
    ColourBy,
    Method,
    Projection,
    ProjectionConfig,
    project_version,
    projection_inputs,
)
from curation.workflows.session import current_schema
from curation.workflows.versions import BUILD_HELP, active_version, model_versions, registered
from pages.parts.common import connection, matcher, who
from pages.parts.legacy_runner import leave_legacy_runner

leave_legacy_runner(__file__)  # first, before anything is drawn (see pages/parts/legacy_runner.py)

COLOUR_LABELS = {
    ColourBy.GRADE: "Decision grade",
    ColourBy.MARGIN_CLASS: "Margin class",
    ColourBy.GENE: "Gene",
    ColourBy.ANSWER: "Answer entity",
}
FIXED_COLOURS = {
    Grade.COMPLETE: "#2ca02c",
    Grade.PARTIAL: "#ff7f0e",
    Grade.NOT_RELEVANT: "#d62728",
    UNDECIDED: "#c7c7c7",
    QUERY: "#111111",
    NONE: "#c7c7c7",
    OTHER: "#8c8c8c",
}


# A map is recomputed only when its inputs change: UMAP takes seconds, and every widget reruns the page.
@st.cache_data(show_spinner="Projecting embeddings…", max_entries=8)
def cached_projection(
    _con,
    _schema,
    _text_match,
    version: str,
    path: str,
    schema_name: str,
    method: str,
    seed: int,
    cap: int,
    state: tuple,
) -> Projection:
    chosen = registered(_con, version)
    config = ProjectionConfig(method=Method(method), seed=seed, max_documents=cap)
    return project_version(_con, chosen, _schema, config, text_match=_text_match)


def figure(result: Projection, by: ColourBy, colours: dict[str, str]):
    # Plotly draws HTML tags in legend names and titles, and a gene or an answer is whatever someone typed: they
    # go in escaped (the hover text comes escaped already, Point.hover).
    labels = [html.escape(label) for label in result.labels(by)]
    colours = {html.escape(label): colour for label, colour in colours.items()}
    fig = px.scatter(
        x=[p.x for p in result.points],
        y=[p.y for p in result.points],
        color=labels,
        symbol=[p.kind for p in result.points],
        symbol_map={DOCUMENT: "circle", QUERY: "x"},
        color_discrete_map=colours,
        category_orders={"color": sorted(colours)},
        custom_data=[[p.hover for p in result.points]],
        labels={"color": COLOUR_LABELS[by], "symbol": "point"},
        title=html.escape(f"{result.version} · {result.method.upper()}"),
        height=620,
    )
    fig.update_traces(marker={"size": 6, "opacity": 0.8}, hovertemplate="%{customdata[0]}<extra></extra>")
    fig.update_xaxes(showticklabels=False, title=None)
    fig.update_yaxes(showticklabels=False, title=None)
    return fig


st.title("Explore embeddings")
con = connection()
if con is None:
    st.stop()
settings = load_settings()
versions, problems = model_versions(con, settings.models_dir, who=who())
for problem in problems:
    st.warning(problem)
if not versions:
    st.info(BUILD_HELP)
    st.stop()

schema = current_schema(con, st.session_state.get("schema"))
names = [v.version for v in versions]
active = active_version(con, schema.name)
left, right, method_col, colour_col = st.columns([2, 2, 1, 1])
start = names.index(active.version) if active is not None and active.version in names else 0
first = left.selectbox("Model version", names, index=start, key="explore_version")
second = right.selectbox(
    "Compare with", [v for v in names if v != first], index=None, placeholder="none", key="explore_compare"
)
method = method_col.radio(
    "Projection",
    [m.value for m in Method],
    horizontal=True,
    format_func=str.upper,
    key="explore_method",
    help="PCA is exact and instant; UMAP keeps neighbourhoods but takes seconds (its first use ~15 s more).",
)
by = ColourBy(
    colour_col.selectbox("Colour by", [c.value for c in ColourBy], format_func=COLOUR_LABELS.get, key="explore_colour")
)
with st.expander("Sample"):
    cap = int(st.number_input("Documents besides the decided ones", 100, 20_000, 1500, step=100))
    seed = int(st.number_input("Seed", 0, 10_000, 13))
# Margin classes need the matcher (built once per store); only build it when they are shown.
text_match = matcher(con).matched if by is ColourBy.MARGIN_CLASS else None
state = (
    str(settings.db_path),
    *projection_inputs(con, schema),
    bool(text_match),
)

results = []
for name in [first, second] if second else [first]:
    path = str(next(v.path for v in versions if v.version == name))
    try:
        results.append(cached_projection(con, schema, text_match, name, path, schema.name, method, seed, cap, state))
    except USER_ERRORS as exc:
        st.error(str(exc))
if not results:
    st.stop()

# One colour per label across both maps, so the same label reads the same on each side.
labels = sorted({label for result in results for label in result.labels(by)})
palette = px.colors.qualitative.Dark24
colours = {label: FIXED_COLOURS.get(label, palette[i % len(palette)]) for i, label in enumerate(labels)}
for column, result in zip(st.columns(len(results)), results, strict=True):
    with column:
        st.plotly_chart(figure(result, by, colours), key=f"map_{result.version}")
        documents = sum(p.kind == DOCUMENT for p in result.points)
        st.caption(f"{documents} documents · {len(result.points) - documents} queries (✕) · hover shows PMID and title")
        for note in result.notes:
            st.caption(note)
if by is ColourBy.MARGIN_CLASS:
    st.caption(
        "Margin class: the positive class EDEL training gives a KB record's abstract (which of the record's "
        "entities it mentions); other documents are not KB positives."
    )
