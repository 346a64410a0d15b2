-- Serving past one instance (docs/scaling.md). Each flush stores the artists it wrote with the partitions their
-- messages came from (`artist_partitions`), and each `serve` instance records, every second, where it answers and
-- which partitions it holds whole in memory (`instances`): a query for an artist goes to the live instance that
-- holds all of that artist's partitions.
CREATE TABLE IF NOT EXISTS artist_partitions (
    artist_id text NOT NULL,
    topic text NOT NULL,
    partition integer NOT NULL,
    PRIMARY KEY (artist_id, topic, partition)
);

CREATE TABLE IF NOT EXISTS instances (
    id text PRIMARY KEY,
    -- The base URL the other instances reach this one at (`serve --advertise-url`).
    address text NOT NULL,
    -- The partitions it holds whole in memory, as parallel arrays.
    loaded_topics text[] NOT NULL,
    loaded_partitions integer[] NOT NULL,
    heartbeat_at timestamptz NOT NULL DEFAULT now()
);
