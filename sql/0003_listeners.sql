-- Unique listeners as postgresql-hll sketches hll(14, 5): log2m 14 (about 0.8% standard error), regwidth 5,
-- automatic explicit threshold (exact up to 1280 listeners), sparse on;
-- written by Backbeat in the extension's own storage format and merged with hll_union.
CREATE EXTENSION IF NOT EXISTS hll;

CREATE TABLE artist_listeners_daily (
    artist_id text NOT NULL,
    day       date NOT NULL,
    listeners hll(14, 5) NOT NULL,
    PRIMARY KEY (artist_id, day)
);

CREATE TABLE track_listeners_daily (
    artist_id text NOT NULL,
    track_id  text NOT NULL,
    day       date NOT NULL,
    listeners hll(14, 5) NOT NULL,
    PRIMARY KEY (artist_id, track_id, day)
);
