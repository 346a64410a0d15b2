-- Derived cubes are no longer written by flushes. A derived cube's view is its merged rows plus the rows of its full
-- hourly table not yet compacted (`<full>_delta`), summed to the cube's key as they are read; compaction writes the
-- derived cubes' merged rows from the full rows it moves, in the same statement (`Store.compact`). A flush appends
-- only the full hourly rows and the listener sketches: about one row per event instead of several.
--
-- Under the compaction lock, every delta row of the full tables and of the derived cubes is first merged (what
-- compaction did until now), so that no full row still in a delta table is also in a derived cube's merged rows.

SELECT pg_advisory_xact_lock(x'6261636B62656174'::bigint);

DO $$
DECLARE
    t record;
BEGIN
    FOR t IN SELECT * FROM (VALUES
        ('stream_hourly', 'artist_id, hour, track_id, platform, country, age_range, gender', ARRAY['streams', 'skips', 'listening_ms']),
        ('revenue_hourly', 'artist_id, hour, source, currency, platform, track_id', ARRAY['amount', 'events']),
        ('social_hourly', 'artist_id, hour, platform, action', ARRAY['count']),
        ('streams_by_artist_hour', 'artist_id, hour', ARRAY['streams', 'skips', 'listening_ms']),
        ('streams_by_artist_day_platform', 'artist_id, day, platform', ARRAY['streams', 'skips', 'listening_ms']),
        ('streams_by_artist_day_country', 'artist_id, day, country', ARRAY['streams', 'skips', 'listening_ms']),
        ('streams_by_artist_day_demographics', 'artist_id, day, age_range, gender', ARRAY['streams', 'skips', 'listening_ms']),
        ('streams_by_artist_day_track', 'artist_id, day, track_id', ARRAY['streams', 'skips', 'listening_ms']),
        ('revenue_by_artist_day', 'artist_id, day, source, currency', ARRAY['amount', 'events']),
        ('social_by_artist_day', 'artist_id, day, platform, action', ARRAY['count'])
    ) AS v(name, key, measures) LOOP
        EXECUTE format(
            'INSERT INTO %I (%s, %s) SELECT %s, %s FROM %I GROUP BY %s ON CONFLICT (%s) DO UPDATE SET %s',
            t.name || '_merged', t.key, array_to_string(t.measures, ', '),
            t.key, (SELECT string_agg(format('sum(%I)', m), ', ') FROM unnest(t.measures) m),
            t.name || '_delta', t.key, t.key,
            (SELECT string_agg(format('%I = %I.%I + excluded.%I', m, t.name || '_merged', m, m), ', ') FROM unnest(t.measures) m));
        EXECUTE format('TRUNCATE %I', t.name || '_delta');
    END LOOP;
END $$;

DROP VIEW streams_by_artist_hour;
DROP TABLE streams_by_artist_hour_delta;
CREATE VIEW streams_by_artist_hour AS
    SELECT * FROM streams_by_artist_hour_merged
    UNION ALL
    SELECT artist_id, hour, sum(streams)::bigint, sum(skips)::bigint, sum(listening_ms)::bigint
    FROM stream_hourly_delta GROUP BY artist_id, hour;

DROP VIEW streams_by_artist_day_platform;
DROP TABLE streams_by_artist_day_platform_delta;
CREATE VIEW streams_by_artist_day_platform AS
    SELECT * FROM streams_by_artist_day_platform_merged
    UNION ALL
    SELECT artist_id, (hour AT TIME ZONE 'UTC')::date, platform, sum(streams)::bigint, sum(skips)::bigint, sum(listening_ms)::bigint
    FROM stream_hourly_delta GROUP BY artist_id, (hour AT TIME ZONE 'UTC')::date, platform;

DROP VIEW streams_by_artist_day_country;
DROP TABLE streams_by_artist_day_country_delta;
CREATE VIEW streams_by_artist_day_country AS
    SELECT * FROM streams_by_artist_day_country_merged
    UNION ALL
    SELECT artist_id, (hour AT TIME ZONE 'UTC')::date, country, sum(streams)::bigint, sum(skips)::bigint, sum(listening_ms)::bigint
    FROM stream_hourly_delta GROUP BY artist_id, (hour AT TIME ZONE 'UTC')::date, country;

DROP VIEW streams_by_artist_day_demographics;
DROP TABLE streams_by_artist_day_demographics_delta;
CREATE VIEW streams_by_artist_day_demographics AS
    SELECT * FROM streams_by_artist_day_demographics_merged
    UNION ALL
    SELECT artist_id, (hour AT TIME ZONE 'UTC')::date, age_range, gender, sum(streams)::bigint, sum(skips)::bigint, sum(listening_ms)::bigint
    FROM stream_hourly_delta GROUP BY artist_id, (hour AT TIME ZONE 'UTC')::date, age_range, gender;

DROP VIEW streams_by_artist_day_track;
DROP TABLE streams_by_artist_day_track_delta;
CREATE VIEW streams_by_artist_day_track AS
    SELECT * FROM streams_by_artist_day_track_merged
    UNION ALL
    SELECT artist_id, (hour AT TIME ZONE 'UTC')::date, track_id, sum(streams)::bigint, sum(skips)::bigint, sum(listening_ms)::bigint
    FROM stream_hourly_delta GROUP BY artist_id, (hour AT TIME ZONE 'UTC')::date, track_id;

DROP VIEW revenue_by_artist_day;
DROP TABLE revenue_by_artist_day_delta;
CREATE VIEW revenue_by_artist_day AS
    SELECT * FROM revenue_by_artist_day_merged
    UNION ALL
    SELECT artist_id, (hour AT TIME ZONE 'UTC')::date, source, currency, sum(amount)::numeric(38, 6), sum(events)::bigint
    FROM revenue_hourly_delta GROUP BY artist_id, (hour AT TIME ZONE 'UTC')::date, source, currency;

DROP VIEW social_by_artist_day;
DROP TABLE social_by_artist_day_delta;
CREATE VIEW social_by_artist_day AS
    SELECT * FROM social_by_artist_day_merged
    UNION ALL
    SELECT artist_id, (hour AT TIME ZONE 'UTC')::date, platform, action, sum(count)::bigint
    FROM social_hourly_delta GROUP BY artist_id, (hour AT TIME ZONE 'UTC')::date, platform, action;
