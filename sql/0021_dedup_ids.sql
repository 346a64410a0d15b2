-- The event ids each partition's dedup window remembered (docs/events.md, "Resent events"): one row per partition
-- and flush that remembered new ids, written in the flush's transaction beside its offset move, so that the window
-- and the offsets are durable together. The partition's next owner loads its rows before it consumes. Once a
-- partition has 32 rows under 1 MiB, a flush merges them into one (their ids one after another), so that a
-- partition keeps few rows however often it is flushed.
CREATE TABLE IF NOT EXISTS dedup_ids (
    topic             text    NOT NULL,
    partition         integer NOT NULL,
    -- The offsets of the events whose ids the row holds: from the stored offset the first flush started from (0
    -- when none was stored) to the one the last stored.
    from_offset       bigint  NOT NULL,
    through_offset    bigint  NOT NULL,
    -- The latest expiry among the row's ids, in seconds of event time: once the partition's newest event time
    -- passes it, the row is deleted.
    expires_max       bigint  NOT NULL,
    -- The newest occurred_at (seconds) the partition's window had seen at the row's last flush.
    newest_event_time bigint  NOT NULL,
    -- A version byte, then 24 bytes an id: its id hash, payload hash and expiry (DedupWindow+Storage.swift).
    ids               bytea   NOT NULL,
    PRIMARY KEY (topic, partition, from_offset, through_offset)
);
