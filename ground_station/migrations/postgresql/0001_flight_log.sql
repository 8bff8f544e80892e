-- 0001: the flight log, the same tables and keys as a SQLite flight log of schema version 2
-- (see ground_station/flight_log.py for what each column means), and the lesson couriers' ledger.

CREATE TABLE streams (
    vehicle_id      TEXT   NOT NULL,
    stream_id       TEXT   NOT NULL,
    ordinal         BIGINT NOT NULL,             -- 1, 2, ... in the order the vehicle's streams were first heard
    contiguous_seq  BIGINT NOT NULL DEFAULT 0,   -- every seq <= this is stored (or unrecoverable)
    max_seen_seq    BIGINT NOT NULL DEFAULT 0,
    unrecoverable   BIGINT NOT NULL DEFAULT 0,   -- seqs pruned by the vehicle before we had them
    PRIMARY KEY (vehicle_id, stream_id)
);

-- Each vehicle's current stream (the one heard last).
CREATE VIEW vehicles AS
    SELECT vehicle_id, stream_id, contiguous_seq, max_seen_seq, unrecoverable FROM streams s
    WHERE ordinal = (SELECT MAX(ordinal) FROM streams t WHERE t.vehicle_id = s.vehicle_id);

CREATE TABLE messages (
    vehicle_id  TEXT   NOT NULL,
    stream_id   TEXT   NOT NULL,
    seq         BIGINT NOT NULL,
    type        TEXT   NOT NULL,
    t_ns        BIGINT NOT NULL,
    received_ns BIGINT NOT NULL,
    frame       BYTEA  NOT NULL,                 -- the envelope exactly as received
    PRIMARY KEY (vehicle_id, stream_id, seq)
);

CREATE TABLE events (
    vehicle_id TEXT   NOT NULL,
    stream_id  TEXT   NOT NULL,
    seq        BIGINT NOT NULL,
    t_ns       BIGINT NOT NULL,
    kind       TEXT   NOT NULL,
    detail     BYTEA,                            -- msgpack
    PRIMARY KEY (vehicle_id, stream_id, seq)
);

CREATE TABLE flights (
    vehicle_id  TEXT   NOT NULL,
    stream_id   TEXT   NOT NULL,
    start_seq   BIGINT NOT NULL,
    end_seq     BIGINT,
    start_t_ns  BIGINT NOT NULL,
    end_t_ns    BIGINT,
    info        BYTEA,                           -- msgpack of the flight_start payload
    status      TEXT   NOT NULL,                 -- open | ended | aborted
    end_reason  TEXT,
    PRIMARY KEY (vehicle_id, stream_id, start_seq)
);

CREATE TABLE aborts (
    vehicle_id TEXT   NOT NULL,
    stream_id  TEXT   NOT NULL,
    start_seq  BIGINT NOT NULL,
    end_seq    BIGINT NOT NULL,
    end_t_ns   BIGINT NOT NULL,
    reason     TEXT   NOT NULL,
    PRIMARY KEY (vehicle_id, stream_id, start_seq)
);

CREATE TABLE rejects (
    vehicle_id TEXT   NOT NULL,
    reason     TEXT   NOT NULL,
    count      BIGINT NOT NULL,
    PRIMARY KEY (vehicle_id, reason)
);

-- Which post-flight bundle each vehicle acknowledged or refused (ground_station/lesson_courier.py).
CREATE TABLE deliveries (
    bundle          TEXT             NOT NULL,
    sha256          TEXT             NOT NULL,
    vehicle_id      TEXT             NOT NULL,
    outcome         TEXT             NOT NULL,   -- 'delivered' or 'refused'
    at              DOUBLE PRECISION NOT NULL,
    added           BIGINT,
    already_present BIGINT,
    reason          TEXT             NOT NULL DEFAULT '',
    PRIMARY KEY (bundle, sha256, vehicle_id)
);
