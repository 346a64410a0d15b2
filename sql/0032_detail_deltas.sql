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
