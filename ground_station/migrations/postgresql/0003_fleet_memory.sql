-- 0003: fleet memory (ground_station/fleet_memory.py): every post-flight lesson bundle, and each of its
-- lessons with its embedding, so any ground host searches and delivers what any other host's vehicles learnt.

CREATE TABLE lesson_bundles (
    name       TEXT             PRIMARY KEY,   -- <vehicle_id>-<stream_id>-<start_seq>.bundle
    sha256     TEXT             NOT NULL,
    vehicle_id TEXT             NOT NULL,      -- the vehicle whose flight taught it
    body       BYTEA            NOT NULL,      -- the bundle file's bytes, as delivered to vehicles
    added_at   DOUBLE PRECISION NOT NULL
);

CREATE TABLE lessons (
    uid             TEXT             PRIMARY KEY,   -- the content hash (contract.records.content_uid)
    collection      TEXT             NOT NULL,
    level           TEXT             NOT NULL,
    parent_uid      TEXT,
    vehicle_id      TEXT             NOT NULL,
    bundle          TEXT             NOT NULL REFERENCES lesson_bundles (name),
    created_at      DOUBLE PRECISION NOT NULL,
    outcome         TEXT             NOT NULL,      -- the collection's outcome field, as the lesson says it
    fields          JSONB            NOT NULL,      -- every text field of the record
    embedding_model TEXT             NOT NULL,      -- model id / dimension the vector was made by
    embedding       REAL[]           NOT NULL       -- unit length: cosine similarity is the dot product
);
-- Search reads the rows one collection (and its filters) selects, then ranks them exactly.
CREATE INDEX lessons_by_collection ON lessons (collection, embedding_model, vehicle_id);
