-- The listener sketches are final when the flush that counted their plays commits, stored by artist and UTC day as
-- the cubes are (migration 0017): `track_listeners_days` holds one row per artist-day, the day's track ids and their
-- sketches in two arrays, and `artist_listeners_days` the artist's sketch of the day; a flush unions its own sketches
-- into those artist-days (`Store.mergeListeners`: INSERT ... ON CONFLICT DO UPDATE, hll_union per key in the same
-- statement). Nothing is left to compact. `artist_listeners_daily` and `track_listeners_daily` are views with the
-- columns the tables had.
--
-- Both views' rows (merged and appended, not yet compacted) are carried over, unioned per key, under the lock
-- compaction took; the tables behind them are dropped. The new tables are partitioned by month of `day`.

SELECT pg_advisory_xact_lock(x'6261636B62656174'::bigint);

CREATE TABLE track_listeners_days (
    artist_id text NOT NULL, day date NOT NULL,
    track_id text[] NOT NULL, listeners hll(14, 5)[] NOT NULL,
    PRIMARY KEY (artist_id, day)
) PARTITION BY RANGE (day);

CREATE TABLE artist_listeners_days (
    artist_id text NOT NULL, day date NOT NULL,
    listeners hll(14, 5) NOT NULL,
    PRIMARY KEY (artist_id, day)
) PARTITION BY RANGE (day);

DO $$
BEGIN
    ALTER TABLE track_listeners_days ALTER COLUMN track_id SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
    RAISE NOTICE 'lz4 is not available: the track ids are compressed with the server''s default';
END $$;

DO $$
DECLARE
    month date;
BEGIN
    FOR month IN SELECT DISTINCT date_trunc('month', day)::date FROM track_listeners_daily LOOP
        PERFORM backbeat_month_partition('track_listeners_days', month);
    END LOOP;
    FOR month IN SELECT DISTINCT date_trunc('month', day)::date FROM artist_listeners_daily LOOP
        PERFORM backbeat_month_partition('artist_listeners_days', month);
    END LOOP;
END $$;

INSERT INTO track_listeners_days
SELECT artist_id, day, array_agg(track_id ORDER BY track_id), array_agg(listeners ORDER BY track_id)
FROM (SELECT artist_id, day, track_id, hll_union_agg(listeners) AS listeners FROM track_listeners_daily GROUP BY 1, 2, 3) t
GROUP BY artist_id, day;

INSERT INTO artist_listeners_days
SELECT artist_id, day, hll_union_agg(listeners) FROM artist_listeners_daily GROUP BY artist_id, day;

DROP VIEW artist_listeners_daily, track_listeners_daily;
DROP TABLE artist_listeners_daily_merged, artist_listeners_daily_delta, track_listeners_daily_merged, track_listeners_daily_delta;

CREATE VIEW track_listeners_daily AS
    SELECT d.artist_id, t.track_id, d.day, t.listeners
    FROM track_listeners_days d, unnest(d.track_id, d.listeners) AS t(track_id, listeners);

CREATE VIEW artist_listeners_daily AS
    SELECT artist_id, day, listeners FROM artist_listeners_days;
