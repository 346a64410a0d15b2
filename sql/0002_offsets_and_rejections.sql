-- The next Kafka offset to consume per topic partition, written in the same transaction as the rollup deltas.
-- Keyed by topic and partition (not by consumer group): the rollups hold each message's effect once, whoever consumed it.
CREATE TABLE kafka_offsets (
    topic       text        NOT NULL,
    partition   integer     NOT NULL,
    next_offset bigint      NOT NULL,
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (topic, partition)
);

-- Messages that failed validation, recorded once each (the position is unique).
CREATE TABLE rejected_events (
    id          bigserial   PRIMARY KEY,
    topic       text        NOT NULL,
    partition   integer     NOT NULL,
    "offset"    bigint      NOT NULL,
    key         bytea,
    value       bytea,
    reason      text        NOT NULL,
    detail      text        NOT NULL,
    rejected_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (topic, partition, "offset")
);
CREATE INDEX rejected_events_reason ON rejected_events (reason, rejected_at);
