"""Curate: complete a partial relation by judging ranked abstracts."""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from curation.errors import USER_ERRORS
from curation.grades import GRADE_LABELS, GRADES
from curation.records import is_adjudication
from curation.workflows import team, timing, watch
from curation.workflows.curate import (
    ENTITY_KINDS,
    ROLES,
    AnswerKindError,
    card_decisions,
    check_answer,
    curate_search,
    known_values,
    record_judgement,
    undo_last,
)
from curation.workflows.entities import annotator_note
from curation.workflows.highlight import escape_text
from curation.workflows.provenance import decision_history, decision_provenance
from curation.workflows.result_filter import filter_rows
from curation.workflows.serving import BM25_ONLY
from curation.workflows.session import corpus_size, current_schema
from curation.workflows.suggest import DEFAULT_TOP_DOCS, suggest_from
from curation.workflows.worklist import fill_worklist, take_worklist_item, worklist, worklist_table
from pages import concept_chips as chips
from pages import result_filters as filters
from pages import suggestion_panel
from pages.common import (
    GRADE_SHORTCUTS,
    connection,
    loaded_retriever,
    log_decision_time,
    matcher,
    planned_version,
    query_linker,
    retriever,
    serving_problem,
    who,
)
from pages.legacy_mode import leave_legacy_pages_mode
from pages.sample_loader import sample_action

leave_legacy_pages_mode()  # first, before anything is drawn (see pages/common.py)

# One colour per highlight role (a constant: no user or corpus text goes into this block).
HIGHLIGHT_CSS = """<style>
mark.ent-query {background: #cfe3ff; border-bottom: 2px solid #1f6f8b;}
mark.ent-answer {background: #c9f2d0; border-bottom: 2px solid #2e8b57;}
mark.ent-other {background: #eeeeee;}
</style>"""

st.title("Curate")
st.markdown(HIGHLIGHT_CSS, unsafe_allow_html=True)
con = connection()
if con is None:
    st.stop()
if corpus_size(con) == 0:
    st.info("No abstracts yet: load the sample, or your own files on the Knowledge base page.")
    sample_action(con, key="sample_curate")
    st.page_link("pages/knowledge_base.py", label="Go to Knowledge base", icon=":material/database:")
    st.stop()

schema = current_schema(con, st.session_state.get("schema"))
curator = (st.session_state.get("curator") or "").strip()
in_team = team.is_team_store(con)  # typed names from before are marked self-declared in the history
# After a restart the page is drawn while the ranking loads in the background; a search waits for it.
engine = loaded_retriever(con, schema.name)
serving_version = engine.version if engine is not None else planned_version(con, schema.name)
problem_slot = st.empty()
if engine is not None and (problem := serving_problem(con, schema.name, engine.version)):
    problem_slot.warning(escape_text(problem))

# --- worklist -----------------------------------------------------------------------------
with st.expander("Worklist", expanded=False):
    if st.button("Add the KB's relations without an answer"):
        st.toast(f"{fill_worklist(con, schema, who=who())} relations added")
    items = worklist(con, schema)
    open_items = [i for i in items if i["status"] in ("open", "in_progress")]
    st.caption(f"{len(open_items)} open of {len(items)}")
    if items:
        st.dataframe(worklist_table(items), hide_index=True, height=200)
    if open_items and st.button("Next open relation", shortcut="n"):
        item = open_items[0]
        for entity_type in schema.query_types:
            st.session_state[f"pick_{entity_type}"] = item["values"].get(entity_type) or None
        take_worklist_item(con, item["item_id"], who())
        st.rerun()

# --- saved queries ---------------------------------------------------------------------------
saved = watch.watched(con, curator, schema.name)
news = sum(1 for item in saved if item.new)
with st.expander(f"Saved queries ({len(saved)}{f', {news} with new abstracts' if news else ''})", expanded=False):
    if not curator:
        st.caption("Enter your name in the sidebar to save queries and see what is new for them.")
    elif not saved:
        st.caption("Search a relation, then **Save this query**: it will say how many abstracts were added since "
                   "you last opened it.")
    for item in saved:
        text, open_col, remove_col = st.columns([6, 1, 1], vertical_alignment="center")
        text.text(item.label())  # typed values: plain text
        if open_col.button("Open", key=f"open_saved_{item.saved.query_id}"):
            opened, new = watch.open_watched(con, item, curator)
            for entity_type in schema.query_types:
                st.session_state[f"pick_{entity_type}"] = opened.get(entity_type) or None
            st.session_state["filter_only"] = list(new)
            st.session_state["filter_only_for"] = {t: opened.get(t) or "" for t in schema.query_types}
            st.rerun()
        if remove_col.button("Remove", key=f"remove_saved_{item.saved.query_id}"):
            watch.remove_watched(con, item.saved.query_id, who())
            st.rerun()

# --- the partial relation -------------------------------------------------------------------
columns = st.columns(len(schema.query_types) + 1)
values = {}
for column, entity_type in zip(columns, schema.query_types, strict=False):
    known = known_values(con, schema, entity_type)
    current = st.session_state.get(f"pick_{entity_type}")
    # Free text typed earlier, or a relation taken from the worklist, stays selectable.
    options = [current, *known] if current and current not in known else known
    values[entity_type] = (
        column.selectbox(
            entity_type,
            options,
            index=None,
            key=f"pick_{entity_type}",
            accept_new_options=True,
            placeholder=f"type a {entity_type.lower()}",
        )
        or ""
    )
dense = engine.dense is not None if engine is not None else serving_version != BM25_ONLY  # versions have one
modes = ["hybrid", "bm25"] if dense else ["bm25"]
mode = columns[-1].radio("Ranking", modes, horizontal=True, help=f"model version: {serving_version}")
rm3 = columns[-1].toggle("RM3 feedback", key="rm3", help="Expand the query with the words of the best abstracts "
                         "(pseudo-relevance feedback) before ranking.")
shown = set(st.pills("Highlight", ROLES, default=list(ROLES), selection_mode="multi") or [])


def _remember_kinds() -> None:
    st.session_state["highlight_kinds"] = list(st.session_state.get("kinds_input") or [])


# Entity kinds shown, remembered in session state (a widget's own key is dropped when a run stops before it).
kinds = st.pills(
    "Entity types", ENTITY_KINDS, default=st.session_state.get("highlight_kinds", list(ENTITY_KINDS)),
    selection_mode="multi", key="kinds_input", on_change=_remember_kinds, help=annotator_note(con),
)
if not any(v.strip() for v in values.values()):
    st.info(
        f"Type a partial relation — {', '.join(schema.query_types)} — to find abstracts that complete its "
        f"{schema.answer}."
    )
    st.stop()

if engine is None:
    engine = retriever(con, schema.name)  # under "Loading the search index…" until it has loaded
    if problem := serving_problem(con, schema.name, engine.version):
        problem_slot.warning(escape_text(problem))
    if engine.dense is None:
        mode = "bm25"  # the planned version did not load: BM25 serves
try:
    # At least the abstracts the suggestions read: every supporting abstract is among the results.
    result = curate_search(
        con, engine, matcher(con), schema, values, mode=mode,
        k=max(st.session_state.get("depth", 20), DEFAULT_TOP_DOCS), shown=shown,
        kinds=set(kinds or []), linker=query_linker(con), applied=chips.applied_links(values), rm3=rm3,
    )
    # The suggestions for the missing slot: the stored relation scores of this ranking's top abstracts.
    suggested = suggest_from(con, matcher(con), schema, values, result.concepts,
                             {row.pmid: row.rank for row in result.rows})
except USER_ERRORS as exc:
    st.error(escape_text(str(exc)))  # messages quote typed values: shown as plain text
    st.stop()
st.session_state["decided_pmids"] = set()  # this full run's rows hold every decision made so far
chips.slot_chips(dict(zip(schema.query_types, columns, strict=False)), result.concepts)
st.text(f"Query: {result.query}")  # typed text: shown as plain text, never as markdown
chips.notes(result)
chosen = suggestion_panel.panel(suggested, values)
if not curator:
    st.warning("Enter your name as curator in the sidebar to record decisions.")


def decide(pmid: str, grade: str, answer: str, note: str, confirm_kind: bool = False) -> None:
    started = timing.clock()
    row = next((r for r in result.rows if r.pmid == pmid), None)
    try:
        record_judgement(
            # The dictionaries only check an answer's kind: a grade alone does not ask for them.
            con, matcher(con).lexicon if (answer or "").strip() and not confirm_kind else None, who(), schema,
            values, pmid, grade,
            answer=answer or "", note=note or "", confirm_kind=confirm_kind,
            provenance=decision_provenance(
                row, row.rank, result.version, result.mode, result.concepts, rm3,
                suggestion=chosen if chosen is not None and pmid in {p.pmid for p in chosen.papers} else None)
            if row is not None else "",
        )
        st.toast(f"PMID {pmid}: {GRADE_LABELS[grade]}")
        # Its card (a fragment) reruns alone and reads its decisions again until the page's next full run.
        st.session_state.setdefault("decided_pmids", set()).add(pmid)
        # Logged with the server's time for it once the card has drawn it (CURATION_TIMING_LOG).
        st.session_state["decision_timing"] = (curator, pmid, started, timing.clock())
    except AnswerKindError as exc:
        st.session_state["decision_kind"] = (pmid, str(exc), (pmid, grade, answer, note, True))
    except USER_ERRORS as exc:
        st.session_state["decision_error"] = (pmid, str(exc))


def undo() -> None:
    try:
        undone = undo_last(con, who())
    except USER_ERRORS as exc:
        st.toast(escape_text(str(exc)))
        return
    st.toast(f"Undone: PMID {undone.pmid}, {GRADE_LABELS[undone.grade]}" if undone else "Nothing to undo")


FOCUS_JS = """<script>
(() => {
  // The marked card of this run: wait until the rerun has drawn it (a stale one is the previous run's).
  let tries = 0;
  const scroll = () => {
    const card = document.querySelector('.st-key-focused-card');
    const box = card && card.closest('[data-testid="stElementContainer"], [data-testid="stVerticalBlock"]');
    if (card && !(box && box.getAttribute('data-stale') === 'true')) {
      card.scrollIntoView({block: 'center'});
    } else if (++tries < 40) {
      setTimeout(scroll, 75);
    }
  };
  setTimeout(scroll, 50);
  if (!window.curationHelpKey) {
    window.curationHelpKey = true;
    document.addEventListener('keydown', (event) => {
      const typing = ['INPUT', 'TEXTAREA'].includes(event.target.tagName) || event.target.isContentEditable;
      if (event.key !== '?' || typing) return;
      const help = [...document.querySelectorAll('button')]
        .find((b) => b.innerText.trim().startsWith('Keyboard shortcuts'));
      if (help) help.click();
    });
  }
})();
</script>"""
SHORTCUTS = (
    ("1 · 2 · 3", "grade the marked abstract: Complete evidence · Partial evidence · Not relevant"),
    ("j · k", "mark the next · previous abstract (the page scrolls to it)"),
    ("u", "undo your last decision"),
    ("n", "take the next open relation from the worklist"),
    ("h or ?", "this list"),
)


@st.dialog("Keyboard shortcuts")
def keyboard_help() -> None:
    st.table({"keys": [k for k, _ in SHORTCUTS], "does": [d for _, d in SHORTCUTS]})
    st.caption("Keys act when no text field has the cursor. A grade key grades the abstract marked ▶.")


def _pop_for(key: str, pmid: str):
    """The session's pending message of ``key`` when it is about ``pmid`` (taken), else None."""
    pending = st.session_state.get(key)
    return st.session_state.pop(key) if pending and pending[0] == pmid else None


@st.fragment
def result_card(row, focused: bool) -> None:
    """One abstract: title, what it mentions and its scores, best sentences, the answer and the grade buttons.

    A fragment: a grade, an answer or a note reruns this card alone (its decisions read again), not the
    search and the other cards. Filters and counts above catch up at the page's next run.
    """
    decisions = row.decisions
    if row.pmid in st.session_state.get("decided_pmids", ()):  # graded since the search that made ``row``
        decisions = card_decisions(con, schema, values, row.pmid)
    marker = "▶ " if focused else ""
    with st.container(border=True, key="focused-card" if focused else None):  # the key: what FOCUS_JS scrolls to
        # title_html and best_html are escaped by curation.workflows.highlight; only its <mark> tags are markup.
        st.markdown(
            f"{marker}**{row.rank}.** [PMID {row.pmid}](https://pubmed.ncbi.nlm.nih.gov/{row.pmid}/) "
            f"{row.title_html}",
            unsafe_allow_html=True,
        )
        if row.meta:
            st.caption(escape_text(row.meta))
        if row.in_kb:
            filters.kb_badge(row)
        st.caption(chips.mentions_caption(row, result.concepts))
        decided = "; ".join(f"{escape_text(d.curator)}: {GRADE_LABELS[d.grade]}"
                            + (" (adjudicated: the final grade)" if is_adjudication(d) else "")
                            for d in decisions)
        st.caption(chips.scores_caption(row) + (f" · decided — {decided}" if decided else ""))
        for sentence_html in row.best_html:
            st.markdown(f"> {sentence_html}", unsafe_allow_html=True)
        with st.expander("Abstract"):
            st.markdown(row.abstract_html, unsafe_allow_html=True)
        if decisions:
            with st.expander(f"Decisions on this abstract ({len(decisions)})"):
                for line in decision_history(decisions, team=in_team):
                    st.text(line)  # curators' names and notes: plain text, never markdown
        answer_col, note_col = st.columns(2)
        typed = st.session_state.get(f"answer_{row.pmid}")
        # An answer typed earlier stays selectable (as in the relation's slots above).
        answer = answer_col.selectbox(
            schema.answer,
            [typed, *row.answers] if typed and typed not in row.answers else list(row.answers),
            index=None,
            accept_new_options=True,
            key=f"answer_{row.pmid}",
            placeholder=f"{schema.answer} in this abstract",
        )
        if answer and answer.strip():
            with answer_col:
                chips.answer_check(check_answer(con, matcher(con), query_linker(con), schema, row.pmid, answer))
        note = note_col.text_input("Note", key=f"note_{row.pmid}")
        buttons = st.columns(3)
        for button, grade in zip(buttons, GRADES, strict=True):
            button.button(
                GRADE_LABELS[grade],
                key=f"{grade}_{row.pmid}",
                shortcut=GRADE_SHORTCUTS[grade] if focused else None,
                disabled=not curator,
                on_click=decide,
                args=(row.pmid, grade, answer, note),
            )
        # Callbacks run before the card is drawn again: what a grade of this card refused is shown here.
        if error := _pop_for("decision_error", row.pmid):
            st.error(escape_text(error[1]))
        if kind := _pop_for("decision_kind", row.pmid):
            st.warning(escape_text(kind[1]))
            st.button("Record anyway", key="record_anyway", disabled=not curator, on_click=decide, args=kind[2])
    log_decision_time(row.pmid)  # the caption of a decision just made is drawn: its server time, when logged


if curator and any(values.values()) and st.button("Save this query", key="save_query"):
    try:
        watch.save_search(con, who(), schema.name, values, result.concepts)
        st.toast("Saved: it will say what is new since you last opened it")
    except USER_ERRORS as exc:
        st.error(escape_text(str(exc)))
view = filters.filter_panel(result, curator)
if st.session_state.get("filter_only_for") != values:  # another relation was typed: the saved query's view ends
    st.session_state.pop("filter_only", None)
kept = filter_rows(result.rows, view)
if (only := st.session_state.get("filter_only")) is not None:
    view = replace(view, only=frozenset(only) or frozenset({""}))
    kept = filter_rows(result.rows, view)
    left, right = st.columns([5, 1], vertical_alignment="center")
    left.info(f"{len(only)} abstract{'s' if len(only) != 1 else ''} added since your last look at this saved query; "
              f"{len(kept)} of them among these results.")
    if right.button("Show all", key="clear_only"):
        st.session_state.pop("filter_only", None)
        st.rerun()
if chosen is not None:
    supporting = {p.pmid for p in chosen.papers}
    kept = [r for r in kept if r.pmid in supporting]
    st.info(f"Showing the {len(kept)} abstracts that relate {escape_text(chosen.name)} to the query, its name "
            f"filled in as the {escape_text(schema.answer.lower())}. Click the suggestion again to show all.")
# Rows in their groups' order (all the concepts, then some); the focus (j/k, grade keys 1-3) walks that order.
# Another sort shows one list in its order.
if view.sort == "relevance":
    groups = {group: [r for r in kept if (r.group or "all") == group] for group in chips.GROUP_TITLES}
else:
    groups = {"sorted": kept}
rows = [row for group_rows in groups.values() for row in group_rows]
if result.rows and not rows:
    st.info(f"None of the {len(result.rows)} results passes the filters ({escape_text(view.describe())}).")
focus = min(st.session_state.get("focus", 0), max(len(rows) - 1, 0))
with st.container(horizontal=True):
    st.button("Undo my last decision", shortcut="u", disabled=not curator, on_click=undo)
    if st.button("Previous", shortcut="k"):
        focus = max(focus - 1, 0)
        st.session_state["scroll_to_focus"] = True
    if st.button("Next", shortcut="j"):
        focus = min(focus + 1, len(rows) - 1)
        st.session_state["scroll_to_focus"] = True
    if st.button("Keyboard shortcuts", shortcut="h", key="shortcuts_help", type="tertiary"):
        keyboard_help()
st.session_state["focus"] = focus
for group, group_rows in groups.items():
    if rows and group in chips.GROUP_TITLES and (group_rows or len(result.concepts) > 1):
        chips.group_header(result, group, len(group_rows))
    for row in group_rows:
        result_card(row, row is rows[focus])
if rows and st.session_state.pop("scroll_to_focus", False):
    # A constant script (no value of the page in it): the browser scrolls the marked card into view and,
    # once per page, lets "?" open the shortcuts as "h" does.
    # Drawn in a container whose key changes with the mark, so the browser runs the script again each move.
    with st.container(key=f"scroll-{focus % 2}"):
        st.html(FOCUS_JS, unsafe_allow_javascript=True)
if len(result.rows) >= st.session_state.get("depth", 20) and st.button("More results"):
    st.session_state["depth"] = st.session_state.get("depth", 20) + 20
    st.rerun()
