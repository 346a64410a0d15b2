-- Messages a consumer found deleted from the broker before it read them (retention ran past a stored offset), or a
-- stored offset past the end of the broker's log (docs/operations.md, "Restarts, crashes and retention"). Written
-- in the same transaction as the offset move that steps over the gap, so an offset never jumps without a row here.
CREATE TABLE IF NOT EXISTS offset_gaps (
    topic         text        NOT NULL,
    partition     integer     NOT NULL,
    -- The position consumption stood at: the first offset not on the broker.
    first_missing bigint      NOT NULL,
    -- The last offset deleted unread (NULL: the position was past the log's end, so what is missing is unknown).
    last_missing  bigint,
    -- The broker's log start and end when the gap was found.
    log_start     bigint      NOT NULL,
    log_end       bigint      NOT NULL,
    detected_at   timestamptz NOT NULL,
    -- Where consumption moved on from, and when (NULL: the partition waits for `backbeat offsets reset`).
    resumed_from  bigint,
    resumed_at    timestamptz,
    PRIMARY KEY (topic, partition, first_missing)
);
