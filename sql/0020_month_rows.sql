-- Month rows: each dashboard cube's and listener sketch's artist-months, so that a read over whole months sums one
-- row per month, not one per day (docs/events.md "Month rows"). `<cube>_months` holds an artist-month's rows in one
-- block, as `<cube>_days` holds a day's (`CubeBlock`: the day's rows merged, an hourly cube's still by hour of the
-- day); `artist_listeners_months` and `track_listeners_months` the month's union of the daily sketches. Each is keyed
-- by `(artist_id, day)`, `day` being the month's first day, so that the writers of day rows write these too.
--
-- `month_rolls.rolled_to` says which months have them: every month before it, for every artist, and those rows are
-- always the sum of the month's days. A month is rolled once it has ended (`Store.rollMonths`, run by serve's
-- maintenance), in one transaction; every later write of a day before `rolled_to` (a late event, a replay) merges
-- into the month's row in the same transaction as into the day's, and a rebuild rolls its months again. NULL: none
-- rolled yet (the first roll starts at the first month stored). The tables start empty.

SELECT pg_advisory_xact_lock(x'6261636B62656174'::bigint);

CREATE TABLE month_rolls (
    single boolean PRIMARY KEY DEFAULT true CHECK (single),
    rolled_to date CHECK (rolled_to = date_trunc('month', rolled_to::timestamp)::date)
);
INSERT INTO month_rolls (rolled_to) VALUES (NULL);

DO $$
DECLARE
    cube text;
BEGIN
    FOREACH cube IN ARRAY ARRAY['streams_by_artist_day_platform', 'streams_by_artist_day_country', 'streams_by_artist_day_track',
                                'streams_by_artist_hour', 'streams_by_artist_day_demographics', 'revenue_by_artist_day',
                                'social_by_artist_day'] LOOP
        EXECUTE format('CREATE TABLE %I (artist_id text NOT NULL, day date NOT NULL, block bytea NOT NULL, PRIMARY KEY (artist_id, day))',
                       cube || '_months');
    END LOOP;
END $$;

CREATE TABLE artist_listeners_months (
    artist_id text NOT NULL, day date NOT NULL, listeners hll(14, 5) NOT NULL, PRIMARY KEY (artist_id, day));
CREATE TABLE track_listeners_months (
    artist_id text NOT NULL, day date NOT NULL, track_id text[] NOT NULL, listeners hll(14, 5)[] NOT NULL,
    PRIMARY KEY (artist_id, day));
