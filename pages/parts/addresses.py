"""Every page at its own address, the start page's included."""

from __future__ import annotations

import streamlit as st
from streamlit.navigation.page import StreamlitPage

HOME_PATH = "home"  # the hidden page behind the root address; no page of app.py is named so


def with_root_forwarding(pages: list[StreamlitPage], start: StreamlitPage) -> list[StreamlitPage]:
    """``pages`` and, first, a hidden default page that sends the root address on to ``start``.

    Streamlit serves its default page at the root address only: ``/curate`` would find no page and
    show a "Page not found" dialog over the start page while Curate was the default. So no listed
    page is the default; the root address runs a hidden page that switches to ``start``, and the
    address bar then shows ``start``'s own address (the one a bookmark keeps). The query string is
    carried along. ``pages`` must not set ``default=True`` (Streamlit allows one default page).

    Args:
        pages: The pages of ``st.navigation``, none of them the default.
        start: The page (one of ``pages``) the root address opens.

    Returns:
        The list to pass to ``st.navigation``.
    """

    def forward() -> None:
        st.switch_page(start, query_params=st.query_params.to_dict())

    home = st.Page(forward, title=start.title, icon=start.icon, url_path=HOME_PATH, default=True,
                   visibility="hidden")
    return [home, *pages]
