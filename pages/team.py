"""Team: who holds which role, grant and revoke them, and the audit of every change (maintainers, team mode)."""

from __future__ import annotations

import streamlit as st

from curation.errors import USER_ERRORS
from curation.workflows import team
from pages.parts.common import connection, who
from pages.parts.highlight import escape_text
from pages.parts.legacy_runner import leave_legacy_runner

leave_legacy_runner(__file__)  # first, before anything is drawn (see pages/parts/legacy_runner.py)

st.title("Team")
con = connection()
if con is None:
    st.stop()
st.caption("Curators decide, undo their own decisions, save queries and export; annotators grade the annotation "
           "queue; adjudicators resolve disagreements and may withdraw anyone's decision; maintainers import, "
           "train, activate, back up and manage roles. Roles claimed by the identity provider count too, without "
           "being stored here.")


def change(action: str) -> None:
    state = st.session_state
    try:
        do = team.grant_role if action == "grant" else team.revoke_role
        state["team_message"] = ("success", do(con, who(), state.get("team_person") or "", state["team_role"],
                                               state.get("team_reason") or ""))
    except USER_ERRORS as exc:
        state["team_message"] = ("error", str(exc))


with st.form("team_change"):
    person, role, reason = st.columns([3, 2, 3])
    person.text_input("Person (their sign-in email)", key="team_person")
    role.selectbox("Role", team.ROLES, key="team_role")
    reason.text_input("Reason (kept in the audit)", key="team_reason")
    grant, revoke = st.columns(2)
    grant.form_submit_button("Grant", on_click=change, args=("grant",), type="primary")
    revoke.form_submit_button("Revoke", on_click=change, args=("revoke",))
if message := st.session_state.pop("team_message", None):
    (st.success if message[0] == "success" else st.error)(escape_text(message[1]))

st.subheader("People")
st.dataframe(team.team_rows(con), hide_index=True)  # a dataframe shows names as text
st.subheader("Role changes")
audit = team.audit_rows(con)
if audit:
    st.dataframe(audit, hide_index=True)
else:
    st.caption("No role has changed yet.")
