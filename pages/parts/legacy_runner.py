"""Leaving Streamlit's legacy ``pages/`` runner, which runs the first script run of a server process.

Streamlit (1.67) runs an app whose main script has a ``pages/`` folder beside it as a legacy multipage app until
the process's first ``st.navigation`` call: that first run lists every file of ``pages/`` in the sidebar, runs a
page's script without app.py when the page's address is opened, and runs app.py as a page of its own, so the
sidebar's widgets get other ids than in every later run (the curator name typed on the first load was dropped).
No setting turns the mode off while the folder is named ``pages/``. ``client.showSidebarNavigation = false``
(.streamlit/config.toml) hides the runner's list, but app.py's navigation too; so app.py and each page call
:func:`leave_legacy_runner` first, which turns the option back on and starts the run again through app.py. Public
calls only (``st.set_option``, ``st.navigation``, ``st.Page``, ``st.rerun``); docs/ARCHITECTURE.md, "The
Streamlit entry point", says why.
"""

from __future__ import annotations

import streamlit as st
from streamlit import config

FIRST_RUN_PATH = "first-run"  # no page of app.py has this address
_left = False  # per process, as Streamlit's legacy mode is: its first script run leaves it


def leave_legacy_runner(script: str) -> None:
    """Run the process's first script run again, through app.py's ``st.navigation``.

    Call it before anything is drawn, with the calling script's ``__file__``: app.py's, or a page's (the first
    run may be a page's, its address opened, without app.py). In the process's first script run, the one
    Streamlit's legacy runner started, it shows the sidebar navigation again (for app.py's, from now on), calls
    ``st.navigation`` (which ends the legacy mode for the process) with the running script as a hidden page, so
    the address resolves to the same page and no "Page not found" shows, then ``st.rerun()``: the same address
    runs again, now through app.py's navigation, whose pages have the addresses the legacy runner gave them (both
    derive them from the file name). Nothing was drawn, so no widget of that run survives with another id. In
    every later run it does nothing; nor under Streamlit's AppTest, which starts every run of a test in the legacy
    mode anew (its runs stay alike that way).

    Args:
        script: The path of the script that calls it (``__file__``).
    """
    global _left
    if _left or config.get_option("global.appTest"):  # AppTest's own flag, which st.get_option does not see
        return
    _left = True
    st.set_option("client.showSidebarNavigation", True)  # process-wide, like the config file that set it false
    # The script's page may not be the default one: Streamlit gives the default page the root address alone.
    st.navigation([st.Page(_never_run, title="first run", url_path=FIRST_RUN_PATH, default=True), st.Page(script)],
                  position="hidden")
    st.rerun()


def _never_run() -> None:
    """The default page ``st.navigation`` requires; the rerun comes first."""
