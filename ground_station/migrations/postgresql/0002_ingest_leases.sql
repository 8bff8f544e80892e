-- 0002: which ingest process serves which vehicle (ground_station/leases.py). Times are the
-- server's clock (epoch seconds), so hosts whose clocks disagree still agree on who holds what.

CREATE TABLE ingest_processes (
    holder  TEXT             PRIMARY KEY,    -- host:pid:random, one per running ingest process
    seen_at DOUBLE PRECISION NOT NULL        -- its last heartbeat
);

CREATE TABLE vehicle_leases (
    vehicle_id  TEXT             PRIMARY KEY,
    holder      TEXT             NOT NULL,
    expires_at  DOUBLE PRECISION NOT NULL,   -- renewed by the holder; free for anyone after it
    acquired_at DOUBLE PRECISION NOT NULL
);
