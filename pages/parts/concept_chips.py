"""The Curate page's concept search, drawn: a chip per typed slot with its "did you mean" buttons, the
search's notes, the result groups and what each result mentions.

Every name shown here is untrusted (typed by the curator, read from an abstract or a KB import) and goes
through :func:`escape_text`, button labels included (Streamlit renders them as Markdown).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import streamlit as st

from pages.parts.highlight import escape_text

APPLIED = "applied_links"  # session key: slot -> (the text typed, the concept id the curator applied to it)
CURATOR_APPLIED = "applied by the curator"  # QueryConcept.how of a link applied from the suggestions
SUGGESTIONS_SHOWN = 3
GROUP_TITLES = {"all": "Mentions all query concepts", "some": "Mentions some"}


def _tidy(text: str) -> str:
    return " ".join(text.split())


def applied_links(values: Mapping[str, str]) -> dict[str, str]:
    """Slot → concept id the curator applied, for the slots that still hold the text it was applied to."""
    links = st.session_state.get(APPLIED, {})
    return {slot: concept for slot, (typed, concept) in links.items() if _tidy(values.get(slot, "")) == typed}


def _apply(slot: str, typed: str, concept_id: str) -> None:
    st.session_state[APPLIED] = {**st.session_state.get(APPLIED, {}), slot: (typed, concept_id)}


def _remove(slot: str) -> None:
    st.session_state[APPLIED] = {k: v for k, v in st.session_state.get(APPLIED, {}).items() if k != slot}


def _suggestions(concept, prompt: str = "") -> None:
    """``prompt`` and up to three suggestions as buttons that apply one (a name two suggestions share shows its id)."""
    shown = concept.alternatives[:SUGGESTIONS_SHOWN]
    # A name shared with another suggestion, or with the concept already linked, shows the concept's id.
    names = [c.canonical.casefold() for c in shown] + ([concept.canonical.casefold()] if concept.concept_ids else [])
    with st.container(horizontal=True, gap="small", vertical_alignment="center"):
        if prompt:
            st.markdown(prompt)
        for n, candidate in enumerate(shown):
            label = candidate.canonical + (f" ({candidate.concept_id})" if names.count(names[n]) > 1 else "")
            st.button(
                escape_text(label), key=f"apply_{concept.slot}_{n}", on_click=_apply,
                args=(concept.slot, concept.typed, candidate.concept_id), icon=":material/link:",
                help=escape_text(f"Search for {candidate.kind} {candidate.concept_id} ({candidate.how} match of "
                                 f"'{candidate.matched}', {candidate.score:.2f})"),
            )


def _other_species(concept) -> None:
    """The same name's gene in another species (mouse Erbb2 beside human ERBB2), as buttons that apply it."""
    others = concept.other_species[:SUGGESTIONS_SHOWN]
    if not others:
        return
    with st.container(horizontal=True, gap="small", vertical_alignment="center"):
        st.caption("other species:")
        for n, candidate in enumerate(others):
            st.button(
                escape_text(f"{candidate.canonical} ({concept.species_of(candidate.concept_id)})"),
                key=f"species_{concept.slot}_{n}", on_click=_apply, type="tertiary", icon=":material/pets:",
                args=(concept.slot, concept.typed, candidate.concept_id),
                help=escape_text(f"Search for {candidate.kind} {candidate.concept_id} instead"),
            )


def _link_actions(concept) -> None:
    """Under a linked slot: remove a link the curator applied; the other candidates, behind a popover."""
    with st.container(horizontal=True, gap="small"):
        if concept.how == CURATOR_APPLIED:
            st.button("Remove this link", key=f"unlink_{concept.slot}", on_click=_remove, args=(concept.slot,),
                      icon=":material/link_off:", type="tertiary")
        if concept.alternatives:
            with st.popover(f"did you mean… ({len(concept.alternatives[:SUGGESTIONS_SHOWN])})", type="tertiary"):
                _suggestions(concept)


def slot_chip(concept) -> None:
    """One typed slot as linked: name (species), id(s), kind, confidence and how; else what was searched and the
    suggestions. A gene the name also names in another species is offered at once, one click to apply it.

    A linked slot keeps its other candidates behind a "did you mean" popover (it is searched already); an
    offered link shows them as buttons at once, since the slot is searched as typed until one is applied.
    """
    if concept.status == "linked":
        species = f" ({concept.linked_species})" if concept.linked_species else ""
        st.markdown(f":green-badge[:material/link: {escape_text(concept.canonical + species)}]")
        details = (concept.kind, ", ".join(concept.concept_ids), f"confidence {concept.confidence:.2f}", concept.how)
        st.caption(escape_text(" · ".join(d for d in details if d)))
        _other_species(concept)
        if concept.how == CURATOR_APPLIED or concept.alternatives:
            _link_actions(concept)
    elif concept.status == "offered":
        _suggestions(concept, ":orange-badge[:material/link_off: not linked — did you mean]")
    else:
        st.markdown(":gray-badge[:material/link_off: not linked]")
    if concept.note:
        st.caption(escape_text(concept.note))


def slot_chips(columns: Mapping[str, object], concepts: Sequence) -> None:
    """A chip under each slot's field (``columns``: slot → the column holding its field)."""
    for concept in concepts:
        if concept.slot in columns:
            with columns[concept.slot]:
                slot_chip(concept)


def notes(result, building: bool = False) -> None:
    """The search's problems (slots no abstract mentions, with close names; offered links) as warnings.

    ``building``: the concept index is still being built (said above the results), so no result is not "none".
    """
    for note in result.notes:
        st.warning(escape_text(note), icon=":material/search_off:")
    if not result.rows and building:
        st.info("No abstract found yet: the concept index is still being built (see above); search again once it "
                "is done.")
    elif not result.rows:
        reason = " See above." if result.notes else ""
        # not "no abstract mentions them": a name too short to look up in the text may be written unlinked
        st.info(f"No abstract was found for the query's concepts, so none is shown.{reason} Try another name, "
                "or apply one of the suggestions under the fields.")


def group_header(result, group: str, shown: int) -> None:
    """The header of a result group ("all" / "some") with the number of documents in it."""
    count = result.groups.get(group, shown)
    st.subheader(f"{GROUP_TITLES[group]} ({count})")
    if group == "all" and not count:
        st.caption("No abstract mentions every query concept.")
    elif shown < count:
        st.caption(f"showing the first {shown}")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def _how(match, marked: int) -> str:
    """How the result mentions one query concept; ``marked``: how many times the card highlights it (the text
    check finds every written form, where the concept index may list fewer, e.g. only its gold mentions)."""
    if match.mentions:
        how = f"{match.how}, {_plural(match.mentions, 'mention')}"
        return f"{how}; {marked} highlighted" if marked > match.mentions else how
    return f"{match.how}: {', '.join(match.forms[:3])}" if match.forms else match.how


def _marked(row, slot: str) -> int:
    """How many query spans of ``slot`` the row's title and abstract highlight."""
    return sum(1 for part in (row.title, row.abstract) for span in part.spans
               if span.entity_type == "query" and str(span.concept).startswith(f"{slot}:"))


def mentions_caption(row, concepts: Sequence) -> str:
    """Which query concepts a result mentions and how, and which it does not (escaped)."""
    said = [f"{m.slot} {m.concept} — {_how(m, _marked(row, m.slot))}" for m in row.concepts]
    found = {m.slot for m in row.concepts}
    missing = [f"{c.slot} {c.canonical}" for c in concepts if c.slot not in found]
    text = " · ".join(said) + (f" · not mentioned: {', '.join(missing)}" if missing else "")
    return escape_text(text)


def scores_caption(row) -> str:
    """Each stage's score and rank ("lexical 8.412 #3"), or the fused, BM25 and dense scores of a plain search."""
    if row.stages:
        return " · ".join(f"{s.stage} {s.score:.3f}" + (f" #{s.rank}" if s.rank is not None else "")
                          for s in row.stages)
    scores = [("fused", row.fused), ("BM25", row.bm25), ("dense", row.dense)]
    return " · ".join(f"{name} {value:.3f}" for name, value in scores if value is not None)


def answer_check(check) -> None:
    """What a filled answer links to, and a warning when the abstract does not mention it."""
    if check.status == "linked":
        ids = ", ".join(check.concept_ids)
        st.caption(escape_text(f"→ {check.canonical} ({ids}; {check.how})", line_start=False))
    elif check.suggestions:
        st.caption(escape_text(f"not linked; close names: {', '.join(check.suggestions)}", line_start=False))
    if check.problem:
        st.warning(escape_text(check.problem))
