"""The store's evidence about candidate documents, for the learned stage (:class:`StoreSignals`).

Read in three queries per search (stored relation pairs, annotations, KB citations) plus one for decisions, all
bound to the candidates' PMIDs, so a search's cost does not grow with the store. A curator's grades count as
:data:`curation.ranking.features.GRADE_GAINS`; an adjudicated grade replaces the others on its item.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import duckdb

from curation.ranking.features import GRADE_GAINS, Evidence, query_key
from curation.schemas import RelationSchema
from curation.store.annotations import list_annotations
from curation.store.decisions import decisions_on_documents
from curation.store.kb import kb_records_citing
from curation.store.relations import list_relation_pairs


class StoreSignals:
    """:class:`curation.ranking.features.Signals` read from a store, for one schema."""

    def __init__(self, con: duckdb.DuckDBPyConnection, schema: RelationSchema) -> None:
        self.con = con
        self.schema = schema

    def evidence(self, pmids: Sequence[str]) -> Mapping[str, Evidence]:
        pmids = list(dict.fromkeys(pmids))
        if not pmids:
            return {}
        # The served engine (and these signals with it) outlives the call that loaded it and is shared by the
        # app's sessions, each on its own thread: a DuckDB connection is not for concurrent use, a cursor is.
        cursor = self.con.cursor()
        try:
            return self._evidence(cursor, pmids)
        finally:
            cursor.close()

    def _evidence(self, con: duckdb.DuckDBPyConnection, pmids: list[str]) -> Mapping[str, Evidence]:
        pairs: dict[str, list] = {}
        for row in list_relation_pairs(con, pmids):
            pairs.setdefault(row.pmid, []).append(row)
        kinds: dict[str, dict[str, int]] = {}
        for pmid, rows in list_annotations(con, pmids).items():
            counts = kinds.setdefault(pmid, {})
            for row in rows:
                counts[row.entity_type] = counts.get(row.entity_type, 0) + 1
        query_types = self.schema.query_types
        cited: dict[str, dict[str, int]] = {}
        for pmid, records in kb_records_citing(con, self.schema.name, pmids).items():
            for record in records:
                key = query_key({t: record.get(t) for t in query_types if record.get(t)})
                cited.setdefault(pmid, {})[key] = cited.get(pmid, {}).get(key, 0) + 1
        grades: dict[str, dict[str, int]] = {}
        adjudicated: set[tuple[str, str]] = set()
        for d in decisions_on_documents(con, self.schema.name, pmids):
            key = query_key({t: v for t, v in d.query_entities if t in query_types and v})
            gain = GRADE_GAINS.get(d.grade)
            if gain is None or (d.pmid, key) in adjudicated:
                continue
            per = grades.setdefault(d.pmid, {})
            if d.adjudication:  # the adjudicator's grade decides the item
                adjudicated.add((d.pmid, key))
                per[key] = gain
            else:
                per[key] = max(per.get(key, 0), gain)
        return {p: Evidence(tuple(pairs.get(p, ())), kinds.get(p, {}), cited.get(p, {}), grades.get(p, {}))
                for p in pmids}
