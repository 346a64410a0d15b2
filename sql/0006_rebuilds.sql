-- One row per `backbeat rebuild`, written in the transaction that swaps the interval's aggregates. A running
-- `serve` watches the highest id and reloads its in-memory days when it changes.
CREATE TABLE rebuilds (
    id          bigserial   PRIMARY KEY,
    from_day    date        NOT NULL,
    to_day      date        NOT NULL,
    events      bigint      NOT NULL,
    finished_at timestamptz NOT NULL DEFAULT now()
);
