-- Issue 36: a flush's write costs what arrived, not what is stored. Until now a flush merged its rows of every
-- artist-day it touched into the stored block of the full-dimension tables (`<cube>_days`): serve read, decoded,
-- merged and encoded the whole block and PostgreSQL rewrote it, so that each write grew with the day (the busiest
-- artist's block of a day reached 700 KB, some 5 MB a day for 200 artists, rewritten every second).
--
-- Now a flush appends its block of each artist-day of these tables to `<cube>_deltas` (no key: any number a day),
-- and compaction (`Store.compactDetail`) merges an artist-day's deltas into its block in a transaction of its own
-- once they are many or large beside it. The day's rows are its block's plus its deltas' (a key may be in several: a
-- reader sums them), which `<cube>_blocks` gives; the views of the rows read it.
--
-- The dashboard cubes keep merging at each flush: their blocks are small (a few hundred bytes an artist-day).

SELECT pg_advisory_xact_lock(x'6261636B62656174'::bigint);

-- Each view of the rows reads `<cube>_blocks` where it read `<cube>_days`, its definition otherwise as it was.
DO $$
DECLARE
    cube text;
    definition text;
    reading text;
BEGIN
    FOREACH cube IN ARRAY ARRAY['stream_hourly', 'revenue_hourly', 'social_hourly', 'page_hourly', 'page_funnel_hourly'] LOOP
        EXECUTE format('CREATE TABLE %I (artist_id text NOT NULL, day date NOT NULL, block bytea NOT NULL)', cube || '_deltas');
        EXECUTE format('CREATE INDEX ON %I (artist_id, day)', cube || '_deltas');
        EXECUTE format('CREATE VIEW %I AS SELECT artist_id, day, block FROM %I UNION ALL SELECT artist_id, day, block FROM %I',
                       cube || '_blocks', cube || '_days', cube || '_deltas');
        definition := pg_get_viewdef(cube::regclass);
        reading := replace(definition, ' ' || cube || '_days d', ' ' || cube || '_blocks d');
        IF reading = definition THEN
            RAISE EXCEPTION 'the view % does not read %_days as d', cube, cube;
        END IF;
        EXECUTE format('CREATE OR REPLACE VIEW %I AS %s', cube, reading);
    END LOOP;
END $$;

-- The listener and visitor sketches likewise (migrations 0018, 0028): a flush unioned its sketches into every
-- artist-day's row, the track ids' and pages' arrays included, rewriting them whole (the busiest artist's day of
-- `track_listeners_days` reached 150 KB). Now it appends its rows to `<table>_deltas`, `<table>_sketches` gives a
-- day's rows and its deltas', and compaction unions the deltas into the day's row. The views union each key's
-- sketches, so they keep one row per key.
DO $$
DECLARE
    stored text;
BEGIN
    FOREACH stored IN ARRAY ARRAY['artist_listeners', 'track_listeners', 'artist_visitors', 'page_visitors'] LOOP
        EXECUTE format('CREATE TABLE %I (LIKE %I)', stored || '_deltas', stored || '_days');
        EXECUTE format('CREATE INDEX ON %I (artist_id, day)', stored || '_deltas');
        EXECUTE format('CREATE VIEW %I AS SELECT * FROM %I UNION ALL SELECT * FROM %I', stored || '_sketches', stored || '_days', stored || '_deltas');
    END LOOP;
END $$;

DROP VIEW artist_listeners_daily, track_listeners_daily, artist_visitors_daily, page_visitors_daily, page_source_visitors_daily;

CREATE VIEW artist_listeners_daily AS
    SELECT artist_id, day, hll_union_agg(listeners) AS listeners FROM artist_listeners_sketches GROUP BY artist_id, day;

CREATE VIEW track_listeners_daily AS
    SELECT d.artist_id, t.track_id, d.day, hll_union_agg(t.listeners) AS listeners
    FROM track_listeners_sketches d, unnest(d.track_id, d.listeners) AS t(track_id, listeners)
    GROUP BY d.artist_id, t.track_id, d.day;

CREATE VIEW artist_visitors_daily AS
    SELECT artist_id, day, hll_union_agg(visitors) AS visitors FROM artist_visitors_sketches GROUP BY artist_id, day;

CREATE VIEW page_visitors_daily AS
    SELECT d.artist_id, t.portfolio_id, d.day, hll_union_agg(t.visitors) AS visitors
    FROM page_visitors_sketches d, unnest(d.portfolio_id, d.visitors) AS t(portfolio_id, visitors)
    WHERE strpos(t.portfolio_id, '/') = 0
    GROUP BY d.artist_id, t.portfolio_id, d.day;

CREATE VIEW page_source_visitors_daily AS
    SELECT d.artist_id, nullif(split_part(t.key, '/', 1), '') AS portfolio_id, split_part(t.key, '/', 2) AS source,
           split_part(t.key, '/', 3) AS value, d.day, hll_union_agg(t.visitors) AS visitors
    FROM page_visitors_sketches d, unnest(d.portfolio_id, d.visitors) AS t(key, visitors)
    WHERE strpos(t.key, '/') > 0
    GROUP BY d.artist_id, t.key, d.day;
