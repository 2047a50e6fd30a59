"""Migration 11's rule for decisions recorded before the typed adjudication field, frozen with that migration.

:mod:`curation.store.migrations` applies it to the stored decisions; :mod:`curation.store.decisions` applies it to
journal records older than the field when they are replayed.
"""

from __future__ import annotations

# Migration 11's rule (frozen with it): a decision noted "adjudication" before the typed field was one only
# where its author could adjudicate when they made it. The shell holds every role; a typed name did while the
# store had no role grant (a personal store); a signed-in person did if their latest role_audit row for
# adjudicator or maintainer up to that moment is a grant. Anything else cannot be established: not one.
# curation.store.decisions applies it to journal records older than the field when they are replayed.
LEGACY_ADJUDICATION = """(lower(trim(note)) = 'adjudication' OR lower(trim(note)) LIKE 'adjudication:%')
  AND (
    coalesce(identity_source, 'self-declared') = 'local'
    OR (coalesce(identity_source, 'self-declared') = 'self-declared' AND NOT EXISTS (
        SELECT 1 FROM role_audit AS a WHERE a.changed_at <= decisions.created_at
        GROUP BY a.person, a.role HAVING arg_max(a.change, a.audit_id) = 'grant'))
    OR (identity_source IN ('oidc', 'proxy') AND EXISTS (
        SELECT 1 FROM role_audit AS a
        WHERE a.changed_at <= decisions.created_at AND a.person = decisions.curator
          AND a.role IN ('adjudicator', 'maintainer')
        GROUP BY a.role HAVING arg_max(a.change, a.audit_id) = 'grant'))
  )"""
