"""Who the user is (personal: a typed name; team: an OIDC sign-in, a trusted proxy's header, the local shell) and
what their roles allow; every write in curation.workflows calls :func:`require`. Imports the store and the
shared vocabulary only."""

from __future__ import annotations

from curation.access.identity import (
    BACKGROUND_JOB,
    PROXY_SECRET_HEADER,
    Identity,
    IdentitySource,
    auth_provider,
    from_claims,
    from_proxy,
    identity_of,
    local_operator,
    self_declared,
)
from curation.access.roles import (
    ROLE_ACTIONS,
    Action,
    Role,
    Who,
    account_identity,
    actions_of,
    admit,
    allowed,
    grant,
    is_team_store,
    leave_team_mode,
    needed_roles,
    require,
    revoke,
    roles_of,
    sign_in,
)

__all__ = [
    "BACKGROUND_JOB",
    "PROXY_SECRET_HEADER",
    "ROLE_ACTIONS",
    "Action",
    "Identity",
    "IdentitySource",
    "Role",
    "Who",
    "account_identity",
    "actions_of",
    "admit",
    "allowed",
    "auth_provider",
    "from_claims",
    "from_proxy",
    "grant",
    "identity_of",
    "is_team_store",
    "leave_team_mode",
    "local_operator",
    "needed_roles",
    "require",
    "revoke",
    "roles_of",
    "self_declared",
    "sign_in",
]
