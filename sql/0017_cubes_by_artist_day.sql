-- Every cube, the full-dimension hourly tables and the dashboard cubes, is final when the flush that counted its events
-- commits: each is stored as one row per artist and UTC day (`<cube>_days`), its rows in arrays, one array per column,
-- and a flush merges its own rows into that artist-day's (`Store.mergeDays`: INSERT ... ON CONFLICT DO UPDATE,
-- summing the arrays' rows per key in the same statement). There is nothing left for compaction to merge but the
-- listener sketches, and no read sums rows that are still pending. The view `<cube>` unnests the arrays into the rows
-- it held before, with the same columns; an hourly cube's view gains `day` at the end, so that a read by hour selects
-- the days it needs. An hourly cube's `hour` array holds the hours after the day's midnight UTC.
--
-- Each cube is carried over from its view (its merged rows and the flushed rows not yet compacted), under the
-- compaction lock; the tables behind it are dropped. `<cube>_days` is partitioned by month of `day`, as the merged
-- tables were (migration 0014).

SELECT pg_advisory_xact_lock(x'6261636B62656174'::bigint);

-- Partitions are now also created by flushes, which run concurrently: one creates a month at a time, and a session
-- that finds the month made meanwhile (its catalog snapshot predates the other's commit) leaves it be.
CREATE OR REPLACE FUNCTION backbeat_month_partition(parent text, month date) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    first date := date_trunc('month', month::timestamp)::date;
    name text := parent || '_' || to_char(first, 'YYYY_MM');
    column_type text;
BEGIN
    IF to_regclass(name) IS NOT NULL THEN
        RETURN;
    END IF;
    PERFORM pg_advisory_xact_lock(hashtext(name));
    IF to_regclass(name) IS NOT NULL THEN
        RETURN;
    END IF;
    SELECT format_type(a.atttypid, a.atttypmod) INTO column_type
    FROM pg_partitioned_table p JOIN pg_attribute a ON a.attrelid = p.partrelid AND a.attnum = p.partattrs[0]
    WHERE p.partrelid = parent::regclass;
    BEGIN
        IF column_type = 'date' THEN
            EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)',
                           name, parent, first, (first + interval '1 month')::date);
        ELSE
            EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)',
                           name, parent, first::timestamp AT TIME ZONE 'UTC', (first + interval '1 month')::timestamp AT TIME ZONE 'UTC');
        END IF;
    EXCEPTION WHEN duplicate_table OR unique_violation THEN
        NULL;
    END;
END $$;

CREATE TABLE stream_hourly_days (
    artist_id text NOT NULL, day date NOT NULL,
    hour smallint[] NOT NULL, track_id text[] NOT NULL, platform text[] NOT NULL, country text[] NOT NULL,
    age_range text[] NOT NULL, gender text[] NOT NULL,
    streams bigint[] NOT NULL, skips bigint[] NOT NULL, listening_ms bigint[] NOT NULL,
    PRIMARY KEY (artist_id, day)
) PARTITION BY RANGE (day);

CREATE TABLE revenue_hourly_days (
    artist_id text NOT NULL, day date NOT NULL,
    hour smallint[] NOT NULL, source text[] NOT NULL, currency text[] NOT NULL, platform text[] NOT NULL,
    track_id text[] NOT NULL, amount numeric(38, 6)[] NOT NULL, events bigint[] NOT NULL,
    PRIMARY KEY (artist_id, day)
) PARTITION BY RANGE (day);

CREATE TABLE social_hourly_days (
    artist_id text NOT NULL, day date NOT NULL,
    hour smallint[] NOT NULL, platform text[] NOT NULL, action text[] NOT NULL, count bigint[] NOT NULL,
    PRIMARY KEY (artist_id, day)
) PARTITION BY RANGE (day);

CREATE TABLE streams_by_artist_hour_days (
    artist_id text NOT NULL, day date NOT NULL,
    hour smallint[] NOT NULL, streams bigint[] NOT NULL, skips bigint[] NOT NULL, listening_ms bigint[] NOT NULL,
    PRIMARY KEY (artist_id, day)
) PARTITION BY RANGE (day);

CREATE TABLE streams_by_artist_day_platform_days (
    artist_id text NOT NULL, day date NOT NULL,
    platform text[] NOT NULL, streams bigint[] NOT NULL, skips bigint[] NOT NULL, listening_ms bigint[] NOT NULL,
    PRIMARY KEY (artist_id, day)
) PARTITION BY RANGE (day);

CREATE TABLE streams_by_artist_day_country_days (
    artist_id text NOT NULL, day date NOT NULL,
    country text[] NOT NULL, streams bigint[] NOT NULL, skips bigint[] NOT NULL, listening_ms bigint[] NOT NULL,
    PRIMARY KEY (artist_id, day)
) PARTITION BY RANGE (day);

CREATE TABLE streams_by_artist_day_demographics_days (
    artist_id text NOT NULL, day date NOT NULL,
    age_range text[] NOT NULL, gender text[] NOT NULL,
    streams bigint[] NOT NULL, skips bigint[] NOT NULL, listening_ms bigint[] NOT NULL,
    PRIMARY KEY (artist_id, day)
) PARTITION BY RANGE (day);

CREATE TABLE streams_by_artist_day_track_days (
    artist_id text NOT NULL, day date NOT NULL,
    track_id text[] NOT NULL, streams bigint[] NOT NULL, skips bigint[] NOT NULL, listening_ms bigint[] NOT NULL,
    PRIMARY KEY (artist_id, day)
) PARTITION BY RANGE (day);

CREATE TABLE revenue_by_artist_day_days (
    artist_id text NOT NULL, day date NOT NULL,
    source text[] NOT NULL, currency text[] NOT NULL, amount numeric(38, 6)[] NOT NULL, events bigint[] NOT NULL,
    PRIMARY KEY (artist_id, day)
) PARTITION BY RANGE (day);

CREATE TABLE social_by_artist_day_days (
    artist_id text NOT NULL, day date NOT NULL,
    platform text[] NOT NULL, action text[] NOT NULL, count bigint[] NOT NULL,
    PRIMARY KEY (artist_id, day)
) PARTITION BY RANGE (day);

-- An artist-day's arrays are compressed once its row passes about 2 kB: with lz4 where the server has it (about three
-- times as fast as the default pglz on these rows, for a quarter more bytes), else with the server's default. New
-- month partitions take the setting of their table.
DO $$
DECLARE
    c record;
BEGIN
    FOR c IN SELECT a.attrelid::regclass AS tab, a.attname AS col
             FROM pg_attribute a JOIN pg_class r ON r.oid = a.attrelid
             WHERE r.relkind = 'p' AND r.relname LIKE '%\_days' AND a.attnum > 0 AND NOT a.attisdropped
               AND format_type(a.atttypid, a.atttypmod) LIKE '%[]' LOOP
        EXECUTE format('ALTER TABLE %s ALTER COLUMN %I SET COMPRESSION lz4', c.tab, c.col);
    END LOOP;
EXCEPTION WHEN feature_not_supported THEN
    RAISE NOTICE 'lz4 is not available: the arrays are compressed with the server''s default';
END $$;

DO $$
DECLARE
    t record;
    month date;
BEGIN
    FOR t IN SELECT * FROM (VALUES
        ('stream_hourly', 'extract(hour FROM hour AT TIME ZONE ''UTC'')::smallint AS hour, track_id, platform, country, age_range, gender',
         '(hour AT TIME ZONE ''UTC'')::date', ARRAY['hour', 'track_id', 'platform', 'country', 'age_range', 'gender'],
         ARRAY['streams', 'skips', 'listening_ms']),
        ('revenue_hourly', 'extract(hour FROM hour AT TIME ZONE ''UTC'')::smallint AS hour, source, currency, platform, track_id',
         '(hour AT TIME ZONE ''UTC'')::date', ARRAY['hour', 'source', 'currency', 'platform', 'track_id'], ARRAY['amount', 'events']),
        ('social_hourly', 'extract(hour FROM hour AT TIME ZONE ''UTC'')::smallint AS hour, platform, action',
         '(hour AT TIME ZONE ''UTC'')::date', ARRAY['hour', 'platform', 'action'], ARRAY['count']),
        ('streams_by_artist_hour', 'extract(hour FROM hour AT TIME ZONE ''UTC'')::smallint AS hour', '(hour AT TIME ZONE ''UTC'')::date',
         ARRAY['hour'], ARRAY['streams', 'skips', 'listening_ms']),
        ('streams_by_artist_day_platform', 'platform', 'day', ARRAY['platform'], ARRAY['streams', 'skips', 'listening_ms']),
        ('streams_by_artist_day_country', 'country', 'day', ARRAY['country'], ARRAY['streams', 'skips', 'listening_ms']),
        ('streams_by_artist_day_demographics', 'age_range, gender', 'day', ARRAY['age_range', 'gender'], ARRAY['streams', 'skips', 'listening_ms']),
        ('streams_by_artist_day_track', 'track_id', 'day', ARRAY['track_id'], ARRAY['streams', 'skips', 'listening_ms']),
        ('revenue_by_artist_day', 'source, currency', 'day', ARRAY['source', 'currency'], ARRAY['amount', 'events']),
        ('social_by_artist_day', 'platform, action', 'day', ARRAY['platform', 'action'], ARRAY['count'])
    ) AS v(name, key, day, columns, measures) LOOP
        FOR month IN EXECUTE format('SELECT DISTINCT date_trunc(''month'', %s)::date FROM %I', t.day, t.name) LOOP
            PERFORM backbeat_month_partition(t.name || '_days', month);
        END LOOP;
        -- One row per artist-day: the view's rows summed per key, then gathered into arrays.
        EXECUTE format(
            'INSERT INTO %I SELECT artist_id, day, %s FROM (SELECT artist_id, %s AS day, %s, %s FROM %I GROUP BY %s) r GROUP BY artist_id, day',
            t.name || '_days',
            (SELECT string_agg(format('array_agg(%I)', c), ', ') FROM unnest(t.columns || t.measures) c),
            t.day, t.key, (SELECT string_agg(format('sum(%I) AS %I', m, m), ', ') FROM unnest(t.measures) m),
            t.name, (SELECT string_agg(g::text, ', ') FROM generate_series(1, 2 + cardinality(t.columns)) g));
    END LOOP;
END $$;

DROP VIEW stream_daily, revenue_daily, social_daily;
DROP VIEW stream_hourly, revenue_hourly, social_hourly, streams_by_artist_hour, streams_by_artist_day_platform,
          streams_by_artist_day_country, streams_by_artist_day_demographics, streams_by_artist_day_track,
          revenue_by_artist_day, social_by_artist_day;
DROP VIEW stream_hourly_delta_rows, revenue_hourly_delta_rows, social_hourly_delta_rows;
DROP TABLE stream_hourly_delta, stream_hourly_delta_values, stream_hourly_merged,
           revenue_hourly_delta, revenue_hourly_delta_values, revenue_hourly_merged,
           social_hourly_delta, social_hourly_delta_values, social_hourly_merged,
           streams_by_artist_hour_merged, streams_by_artist_day_platform_merged, streams_by_artist_day_country_merged,
           streams_by_artist_day_demographics_merged, streams_by_artist_day_track_merged,
           revenue_by_artist_day_merged, social_by_artist_day_merged;
DROP SEQUENCE delta_flushes;

CREATE VIEW stream_hourly AS
    SELECT d.artist_id, (d.day::timestamp + r.hour * interval '1 hour') AT TIME ZONE 'UTC' AS hour,
           r.track_id, r.platform, r.country, r.age_range, r.gender, r.streams, r.skips, r.listening_ms, d.day
    FROM stream_hourly_days d,
         unnest(d.hour, d.track_id, d.platform, d.country, d.age_range, d.gender, d.streams, d.skips, d.listening_ms)
             AS r(hour, track_id, platform, country, age_range, gender, streams, skips, listening_ms);

CREATE VIEW revenue_hourly AS
    SELECT d.artist_id, (d.day::timestamp + r.hour * interval '1 hour') AT TIME ZONE 'UTC' AS hour,
           r.source, r.currency, r.platform, r.track_id, r.amount, r.events, d.day
    FROM revenue_hourly_days d,
         unnest(d.hour, d.source, d.currency, d.platform, d.track_id, d.amount, d.events)
             AS r(hour, source, currency, platform, track_id, amount, events);

CREATE VIEW social_hourly AS
    SELECT d.artist_id, (d.day::timestamp + r.hour * interval '1 hour') AT TIME ZONE 'UTC' AS hour,
           r.platform, r.action, r.count, d.day
    FROM social_hourly_days d,
         unnest(d.hour, d.platform, d.action, d.count) AS r(hour, platform, action, count);

-- The full dimensions by day (migration 0015), their hourly part selected by `day` (which prunes the artist-days).
CREATE VIEW stream_daily AS
    SELECT artist_id, hour, day, track_id, platform, country, age_range, gender, streams, skips, listening_ms
    FROM stream_hourly
    UNION ALL
    SELECT artist_id, day::timestamp AT TIME ZONE 'UTC', day, track_id, platform, country, age_range, gender,
           streams, skips, listening_ms
    FROM stream_daily_rolled;

CREATE VIEW revenue_daily AS
    SELECT artist_id, hour, day, source, currency, platform, track_id, amount, events
    FROM revenue_hourly
    UNION ALL
    SELECT artist_id, day::timestamp AT TIME ZONE 'UTC', day, source, currency, platform, track_id, amount, events
    FROM revenue_daily_rolled;

CREATE VIEW social_daily AS
    SELECT artist_id, hour, day, platform, action, count
    FROM social_hourly
    UNION ALL
    SELECT artist_id, day::timestamp AT TIME ZONE 'UTC', day, platform, action, count
    FROM social_daily_rolled;

CREATE VIEW streams_by_artist_hour AS
    SELECT d.artist_id, (d.day::timestamp + r.hour * interval '1 hour') AT TIME ZONE 'UTC' AS hour,
           r.streams, r.skips, r.listening_ms, d.day
    FROM streams_by_artist_hour_days d,
         unnest(d.hour, d.streams, d.skips, d.listening_ms) AS r(hour, streams, skips, listening_ms);

CREATE VIEW streams_by_artist_day_platform AS
    SELECT d.artist_id, d.day, r.platform, r.streams, r.skips, r.listening_ms
    FROM streams_by_artist_day_platform_days d,
         unnest(d.platform, d.streams, d.skips, d.listening_ms) AS r(platform, streams, skips, listening_ms);

CREATE VIEW streams_by_artist_day_country AS
    SELECT d.artist_id, d.day, r.country, r.streams, r.skips, r.listening_ms
    FROM streams_by_artist_day_country_days d,
         unnest(d.country, d.streams, d.skips, d.listening_ms) AS r(country, streams, skips, listening_ms);

CREATE VIEW streams_by_artist_day_demographics AS
    SELECT d.artist_id, d.day, r.age_range, r.gender, r.streams, r.skips, r.listening_ms
    FROM streams_by_artist_day_demographics_days d,
         unnest(d.age_range, d.gender, d.streams, d.skips, d.listening_ms) AS r(age_range, gender, streams, skips, listening_ms);

CREATE VIEW streams_by_artist_day_track AS
    SELECT d.artist_id, d.day, r.track_id, r.streams, r.skips, r.listening_ms
    FROM streams_by_artist_day_track_days d,
         unnest(d.track_id, d.streams, d.skips, d.listening_ms) AS r(track_id, streams, skips, listening_ms);

CREATE VIEW revenue_by_artist_day AS
    SELECT d.artist_id, d.day, r.source, r.currency, r.amount, r.events
    FROM revenue_by_artist_day_days d,
         unnest(d.source, d.currency, d.amount, d.events) AS r(source, currency, amount, events);

CREATE VIEW social_by_artist_day AS
    SELECT d.artist_id, d.day, r.platform, r.action, r.count
    FROM social_by_artist_day_days d,
         unnest(d.platform, d.action, d.count) AS r(platform, action, count);
