"""The store's schema, as an ordered list of migrations.

Each entry is (version, description, DDL). :func:`curation.store.base.migrate` applies the ones a
store has not seen, each in its own transaction, and records them in ``schema_version``. Never
edit a released migration: add a new one.
"""

from __future__ import annotations

from curation.store.legacy_adjudication import LEGACY_ADJUDICATION

MIGRATIONS: tuple[tuple[int, str, str], ...] = (
    (
        1,
        "initial tables",
        """
        CREATE TABLE relation_schemas (
            name VARCHAR PRIMARY KEY,
            definition JSON NOT NULL,
            builtin BOOLEAN NOT NULL,
            added_at TIMESTAMPTZ NOT NULL DEFAULT now()
        );
        CREATE TABLE kb_records (
            record_id VARCHAR PRIMARY KEY,
            schema_name VARCHAR NOT NULL,
            source VARCHAR NOT NULL,
            source_id VARCHAR NOT NULL,
            pmid VARCHAR,
            answer VARCHAR NOT NULL,
            entities JSON NOT NULL,
            attributes JSON NOT NULL,
            origin VARCHAR NOT NULL,
            added_at TIMESTAMPTZ NOT NULL DEFAULT now()
        );
        CREATE TABLE kb_entities (
            record_id VARCHAR NOT NULL,
            position INTEGER NOT NULL,
            entity_type VARCHAR NOT NULL,
            value VARCHAR NOT NULL,
            PRIMARY KEY (record_id, position)
        );
        CREATE TABLE documents (
            pmid VARCHAR PRIMARY KEY,
            title VARCHAR NOT NULL,
            abstract VARCHAR NOT NULL,
            journal VARCHAR NOT NULL DEFAULT '',
            year INTEGER,
            sources VARCHAR[] NOT NULL,
            added_at TIMESTAMPTZ NOT NULL DEFAULT now()
        );
        CREATE TABLE mentions (
            pmid VARCHAR NOT NULL,
            start_offset INTEGER NOT NULL,
            end_offset INTEGER NOT NULL,
            text VARCHAR NOT NULL,
            mention_type VARCHAR NOT NULL,
            concept_id VARCHAR NOT NULL,
            source VARCHAR NOT NULL,
            PRIMARY KEY (pmid, start_offset, end_offset, mention_type, concept_id)
        );
        CREATE TABLE relations (
            pmid VARCHAR NOT NULL,
            relation_type VARCHAR NOT NULL,
            concept1 VARCHAR NOT NULL,
            concept2 VARCHAR NOT NULL,
            novelty VARCHAR NOT NULL,
            source VARCHAR NOT NULL,
            PRIMARY KEY (pmid, relation_type, concept1, concept2)
        );
        CREATE TABLE synonyms (
            kind VARCHAR NOT NULL,
            concept_id VARCHAR NOT NULL,
            name VARCHAR NOT NULL,
            source VARCHAR NOT NULL,
            canonical BOOLEAN NOT NULL,
            PRIMARY KEY (kind, concept_id, name)
        );
        CREATE SEQUENCE ingest_ids START 1;
        CREATE TABLE ingests (
            ingest_id BIGINT PRIMARY KEY DEFAULT nextval('ingest_ids'),
            kind VARCHAR NOT NULL,
            path VARCHAR NOT NULL,
            added INTEGER NOT NULL,
            unchanged INTEGER NOT NULL,
            skipped INTEGER NOT NULL,
            ingested_at TIMESTAMPTZ NOT NULL DEFAULT now()
        );
        CREATE SEQUENCE decision_ids START 1;
        CREATE TABLE decisions (
            decision_id BIGINT PRIMARY KEY DEFAULT nextval('decision_ids'),
            curator VARCHAR NOT NULL CHECK (length(trim(curator)) > 0),
            schema_name VARCHAR NOT NULL,
            query VARCHAR NOT NULL,
            query_entities JSON NOT NULL,
            pmid VARCHAR NOT NULL,
            grade VARCHAR NOT NULL CHECK (grade IN ('complete', 'partial', 'not_relevant')),
            answer VARCHAR NOT NULL DEFAULT '',
            note VARCHAR NOT NULL DEFAULT '',
            created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
            superseded_by BIGINT
        );
        CREATE TABLE model_versions (
            version VARCHAR PRIMARY KEY,
            schema_name VARCHAR NOT NULL,
            path VARCHAR NOT NULL,
            manifest JSON NOT NULL,
            active BOOLEAN NOT NULL DEFAULT false,
            created_at TIMESTAMPTZ NOT NULL DEFAULT now()
        );
        CREATE SEQUENCE job_ids START 1;
        CREATE TABLE jobs (
            job_id BIGINT PRIMARY KEY DEFAULT nextval('job_ids'),
            kind VARCHAR NOT NULL,
            state VARCHAR NOT NULL CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
            params JSON NOT NULL,
            message VARCHAR NOT NULL DEFAULT '',
            pid INTEGER,
            created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
            finished_at TIMESTAMPTZ
        );
        """,
    ),
    (
        2,
        "worklist and undo bookkeeping",
        """
        CREATE SEQUENCE worklist_ids START 1;
        CREATE TABLE worklist (
            item_id BIGINT PRIMARY KEY DEFAULT nextval('worklist_ids'),
            schema_name VARCHAR NOT NULL,
            query_entities JSON NOT NULL,
            entity_key VARCHAR NOT NULL,
            origin VARCHAR NOT NULL CHECK (origin IN ('kb', 'saved', 'adhoc')),
            status VARCHAR NOT NULL CHECK (status IN ('open', 'in_progress', 'done', 'no_evidence')),
            assignee VARCHAR NOT NULL DEFAULT '',
            updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
            UNIQUE (schema_name, entity_key)
        );
        ALTER TABLE decisions ADD COLUMN entity_key VARCHAR;
        ALTER TABLE decisions ADD COLUMN supersedes BIGINT;
        """,
    ),
    (
        3,
        "background jobs: their folder, result and start time",
        """
        ALTER TABLE jobs ADD COLUMN job_dir VARCHAR;
        ALTER TABLE jobs ADD COLUMN result JSON;
        ALTER TABLE jobs ADD COLUMN started_at TIMESTAMPTZ;
        """,
    ),
    (
        4,
        "the concept index: annotations per document, which annotator made them, the entity models",
        """
        CREATE TABLE annotations (
            pmid VARCHAR NOT NULL,
            start_offset INTEGER NOT NULL,
            end_offset INTEGER NOT NULL,
            text VARCHAR NOT NULL,
            entity_type VARCHAR NOT NULL,
            concept_id VARCHAR NOT NULL,
            canonical VARCHAR NOT NULL,
            confidence DOUBLE NOT NULL,
            source VARCHAR NOT NULL CHECK (source IN ('gold', 'recogniser', 'dictionary', 'rule')),
            annotator VARCHAR NOT NULL
        );
        CREATE TABLE annotated_documents (
            pmid VARCHAR PRIMARY KEY,
            annotator VARCHAR NOT NULL,
            text_chars INTEGER NOT NULL,
            annotations INTEGER NOT NULL,
            annotated_at TIMESTAMPTZ NOT NULL DEFAULT now()
        );
        CREATE TABLE entity_models (
            kind VARCHAR NOT NULL CHECK (kind IN ('recogniser', 'linker')),
            path VARCHAR NOT NULL,
            name VARCHAR NOT NULL,
            active BOOLEAN NOT NULL DEFAULT false,
            registered_at TIMESTAMPTZ NOT NULL DEFAULT now(),
            PRIMARY KEY (kind, path)
        );
        """,
    ),
    (
        5,
        "decisions: the search provenance of each judgement (JSON text; NULL for decisions made before)",
        """
        ALTER TABLE decisions ADD COLUMN provenance VARCHAR;
        """,
    ),
    (
        6,
        "the decision journal: the store's id and the last journal record it holds, each decision's journal "
        "record, and notices of repairs made at open (shown to curators until acknowledged)",
        """
        CREATE TABLE journal_state (store_id VARCHAR NOT NULL, applied_seq BIGINT NOT NULL);
        INSERT INTO journal_state VALUES (CAST(uuid() AS VARCHAR), 0);
        ALTER TABLE decisions ADD COLUMN journal_seq BIGINT;
        CREATE SEQUENCE notice_ids START 1;
        CREATE TABLE store_notices (
            notice_id BIGINT PRIMARY KEY DEFAULT nextval('notice_ids'),
            created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
            kind VARCHAR NOT NULL,
            message VARCHAR NOT NULL,
            acknowledged_by VARCHAR
        );
        """,
    ),
    (
        7,
        "documents: first authors and PubMed publication types (from PubMed XML; empty for corpora without them)",
        """
        ALTER TABLE documents ADD COLUMN authors VARCHAR DEFAULT '';
        ALTER TABLE documents ADD COLUMN pub_types VARCHAR[] DEFAULT [];
        """,
    ),
    (
        8,
        "saved queries: a curator's partial relation, its linked concepts, and when the curator last looked",
        """
        CREATE SEQUENCE saved_query_ids START 1;
        CREATE TABLE saved_queries (
            query_id BIGINT PRIMARY KEY DEFAULT nextval('saved_query_ids'),
            curator VARCHAR NOT NULL,
            schema_name VARCHAR NOT NULL,
            query_entities JSON NOT NULL,
            concepts JSON NOT NULL,
            created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
            last_seen_at TIMESTAMPTZ NOT NULL DEFAULT now(),
            UNIQUE (curator, schema_name, query_entities)
        );
        """,
    ),
    (
        9,
        "relation pairs: every co-mentioned concept pair of an annotated document, the relation scorer's "
        "probability that the document relates them and the sentence that does; which scorer scored each document; the "
        "relation scorers the store has seen and the active one",
        """
        CREATE TABLE relation_pairs (
            pmid VARCHAR NOT NULL,
            concept_a VARCHAR NOT NULL,
            kind_a VARCHAR NOT NULL,
            name_a VARCHAR NOT NULL,
            concept_b VARCHAR NOT NULL,
            kind_b VARCHAR NOT NULL,
            name_b VARCHAR NOT NULL,
            score DOUBLE,
            same_sentence BOOLEAN NOT NULL,
            evidence_start INTEGER NOT NULL,
            evidence_end INTEGER NOT NULL,
            PRIMARY KEY (pmid, concept_a, kind_a, concept_b, kind_b)
        );
        CREATE TABLE relation_scored (
            pmid VARCHAR PRIMARY KEY,
            scorer VARCHAR NOT NULL,
            pairs INTEGER NOT NULL,
            scored_at TIMESTAMPTZ NOT NULL DEFAULT now()
        );
        CREATE TABLE relation_scorers (
            path VARCHAR PRIMARY KEY,
            name VARCHAR NOT NULL,
            active BOOLEAN NOT NULL DEFAULT false,
            registered_at TIMESTAMPTZ NOT NULL DEFAULT now()
        );
        """,
    ),
    (
        10,
        "team mode: who holds which role, an audit row for every role change, the people who signed in, and the "
        "identity source of each decision (decisions made before: self-declared)",
        """
        ALTER TABLE decisions ADD COLUMN identity_source VARCHAR DEFAULT 'self-declared';
        CREATE TABLE team_roles (
            person VARCHAR NOT NULL,
            role VARCHAR NOT NULL,
            granted_by VARCHAR NOT NULL,
            granted_at TIMESTAMPTZ NOT NULL DEFAULT now(),
            PRIMARY KEY (person, role)
        );
        CREATE SEQUENCE role_audit_ids START 1;
        CREATE TABLE role_audit (
            audit_id BIGINT PRIMARY KEY DEFAULT nextval('role_audit_ids'),
            changed_at TIMESTAMPTZ NOT NULL DEFAULT now(),
            actor VARCHAR NOT NULL,
            actor_source VARCHAR NOT NULL,
            person VARCHAR NOT NULL,
            role VARCHAR NOT NULL,
            change VARCHAR NOT NULL,
            reason VARCHAR NOT NULL DEFAULT ''
        );
        CREATE TABLE team_people (
            person VARCHAR PRIMARY KEY,
            display_name VARCHAR NOT NULL DEFAULT '',
            source VARCHAR NOT NULL,
            claimed_roles VARCHAR[] NOT NULL DEFAULT [],
            first_seen_at TIMESTAMPTZ NOT NULL DEFAULT now(),
            last_seen_at TIMESTAMPTZ NOT NULL DEFAULT now()
        );
        """,
    ),
    (
        11,
        "decisions: a typed adjudication field (only the adjudicate workflow sets it, behind the adjudicator role); "
        "a decision noted 'adjudication' before counts as one only where its author could adjudicate when they "
        "made it (the shell; a typed name while the store had no roles; a signed-in adjudicator or maintainer)",
        # Until now the note's text made an adjudication, so any curator could type one: LEGACY_ADJUDICATION.
        f"""
        ALTER TABLE decisions ADD COLUMN adjudication BOOLEAN DEFAULT false;
        UPDATE decisions SET adjudication = true WHERE {LEGACY_ADJUDICATION}
        """,
    ),
    (
        12,
        "team mode: the OIDC account (issuer, subject) each signed-in email belongs to, bound at its first sign-in",
        """
        CREATE TABLE team_accounts (
            issuer VARCHAR NOT NULL,
            subject VARCHAR NOT NULL,
            person VARCHAR NOT NULL UNIQUE,
            bound_at TIMESTAMPTZ NOT NULL DEFAULT now(),
            PRIMARY KEY (issuer, subject)
        );
        """,
    ),
    (
        13,
        "synonyms: the species of a gene concept (human, mouse; '' unknown), so a typed gene can prefer human",
        "ALTER TABLE synonyms ADD COLUMN species VARCHAR NOT NULL DEFAULT ''",
    ),
    (
        14,
        "loads: each load of the sample as its planned steps (files, vocabularies, annotation, training jobs) "
        "and which are done, so a load stopped at any point is finished at the next start",
        """
        CREATE TABLE loads (
            load_id INTEGER PRIMARY KEY,
            source VARCHAR NOT NULL,
            started_by VARCHAR NOT NULL DEFAULT '',
            planned_at TIMESTAMPTZ NOT NULL DEFAULT now()
        );
        CREATE TABLE load_steps (
            load_id INTEGER NOT NULL,
            position INTEGER NOT NULL,
            kind VARCHAR NOT NULL,
            fmt VARCHAR NOT NULL DEFAULT '',
            path VARCHAR,
            source VARCHAR NOT NULL DEFAULT '',
            state VARCHAR NOT NULL DEFAULT 'pending',
            message VARCHAR NOT NULL DEFAULT '',
            finished_at TIMESTAMPTZ,
            PRIMARY KEY (load_id, position)
        );
        """,
    ),
    (
        15,
        "screening: a topic's queue (its candidates in the served search's order when it was first screened, with "
        "what each card and the learner need), so screening a topic survives a restart",
        """
        CREATE TABLE screening_topics (
            schema_name VARCHAR NOT NULL,
            entity_key VARCHAR NOT NULL,
            query_entities JSON NOT NULL,
            query VARCHAR NOT NULL,
            version VARCHAR NOT NULL DEFAULT '',
            mode VARCHAR NOT NULL DEFAULT '',
            concepts JSON NOT NULL,
            evidence_names JSON NOT NULL,
            strategy VARCHAR NOT NULL DEFAULT 'highest',
            created_by VARCHAR NOT NULL DEFAULT '',
            created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
            updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
            PRIMARY KEY (schema_name, entity_key)
        );
        CREATE TABLE screening_candidates (
            schema_name VARCHAR NOT NULL,
            entity_key VARCHAR NOT NULL,
            position INTEGER NOT NULL,
            pmid VARCHAR NOT NULL,
            hit JSON NOT NULL,
            evidence JSON,
            PRIMARY KEY (schema_name, entity_key, position)
        );
        """,
    ),
    (
        16,
        "starter relation schemas: Disease-Treatment, Chemical-Disease, Gene-Disease (the relations the sample's "
        "corpora annotate), added beside PO and PTM unless the store already has a schema of that name",
        "",
    ),
)
