"""Leaving Streamlit's legacy multipage mode on the first run of a server process (a helper, not a page)."""

from __future__ import annotations

import streamlit as st


def leave_legacy_pages_mode() -> None:
    """Start the script run again through app.py when Streamlit's legacy ``pages/`` runner started it.

    A ``pages/`` folder beside the main script makes Streamlit treat the app as a legacy multipage
    app until the server process's first ``st.navigation`` call, so the first run after the server
    starts, and only it, is run by the legacy runner. That run lists every file of ``pages/`` in the
    sidebar ("app", "common", ...), runs a page's script without app.py when the page's own address
    is opened, and runs app.py as a page of its own, so the sidebar's widgets get other ids than in
    every later run: the curator name typed on the first load was dropped, and a second Curator
    field showed while the next run replaced the first.

    Called before anything is drawn: by app.py and as the first statement of every page script (the
    first run may be a page script's, its address opened, without app.py). Ends the legacy mode for
    the process (as ``st.navigation`` does) and reruns the same address, now through app.py's
    ``st.navigation`` (a page keeps its address: both derive it from the file name). In any other run,
    and outside one, it does nothing; nor under Streamlit's AppTest, which puts every run of a test in
    the legacy mode again (its runs stay consistent that way, as they always were).
    """
    from streamlit import config

    try:
        from streamlit.runtime.pages_manager import PagesManager
        from streamlit.runtime.scriptrunner import get_script_run_ctx
    except ImportError:  # a Streamlit without the legacy runner
        return
    if config.get_option("global.appTest"):
        return
    if getattr(PagesManager, "uses_pages_directory", None) and get_script_run_ctx() is not None:
        PagesManager.uses_pages_directory = False
        st.rerun()
