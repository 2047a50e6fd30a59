"""The Curate page's keyboard: the marked (focused) result, j / k to move it, the shortcuts dialog, and the
script that scrolls the marked card into view.

The grade keys 1-3 belong to the marked card's buttons (:mod:`pages.parts.result_card`); u, n, h are buttons'
own shortcuts. Everything the controls need comes in as arguments.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

FOCUS_JS = """<script>
(() => {
  // The marked card of this run: wait until the rerun has drawn it (a stale one is the previous run's).
  let tries = 0;
  const scroll = () => {
    const card = document.querySelector('.st-key-focused-card');
    const box = card && card.closest('[data-testid="stElementContainer"], [data-testid="stVerticalBlock"]');
    if (card && !(box && box.getAttribute('data-stale') === 'true')) {
      card.scrollIntoView({block: 'center'});
    } else if (++tries < 200) {  // up to 15 s: the rerun that draws it can be slow on a busy machine
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


def focus_controls(count: int, curator: str, undo: Callable[[], None]) -> int:
    """Undo, Previous (k), Next (j) and the shortcuts dialog (h) in one row; returns the marked result's index
    among the ``count`` results drawn (kept in the session)."""
    focus = min(st.session_state.get("focus", 0), max(count - 1, 0))
    with st.container(horizontal=True):
        st.button("Undo my last decision", shortcut="u", disabled=not curator, on_click=undo)
        if st.button("Previous", shortcut="k"):
            focus = max(focus - 1, 0)
            st.session_state["scroll_to_focus"] = True
        if st.button("Next", shortcut="j"):
            focus = min(focus + 1, count - 1)
            st.session_state["scroll_to_focus"] = True
        if st.button("Keyboard shortcuts", shortcut="h", key="shortcuts_help", type="tertiary"):
            keyboard_help()
    st.session_state["focus"] = focus
    return focus


def scroll_to_focus(focus: int) -> None:
    """After j or k: the browser scrolls the marked card into view and, once per page, lets "?" open the
    shortcuts as "h" does (a constant script: no value of the page in it)."""
    if st.session_state.pop("scroll_to_focus", False):
        # Drawn in a container of a new key each time, so the browser mounts it anew and runs the script: a key that
        # came back (the mark's parity did: a gene search then gene + variant both mark result 0) could find the
        # last element still mounted, and the page did not scroll.
        sequence = st.session_state.get("scroll_sequence", 0) + 1
        st.session_state["scroll_sequence"] = sequence
        with st.container(key=f"scroll-{sequence}"):
            st.html(FOCUS_JS, unsafe_allow_javascript=True)
