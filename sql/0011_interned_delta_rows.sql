-- A flush's full hourly rows name their dimension values by integers. Each flush writes, beside its rows in
-- `<full>_delta`, the texts its rows use in `<full>_delta_values` (id, value): ids are the flush's number from
-- `delta_flushes` in the upper 32 bits and the value's number within the flush below, so flushes never share or
-- coordinate ids. PostgreSQL then parses eight-byte integers instead of texts for every row (COPY costs about a third
-- less CPU). `<full>_delta_rows` is the delta with its texts; the views read it as they read the delta before.
-- Compaction deletes every delta row and every value it sees in one statement, so values live exactly as long as
-- the rows of their flush. The integer columns are named `<column>_ref`, so that an older instance's flush or
-- compaction, which names the text columns, fails instead of taking integers for texts.
--
-- The rows flushes appended before are carried over under one flush number per table.

SELECT pg_advisory_xact_lock(x'6261636B62656174'::bigint);

CREATE SEQUENCE delta_flushes;

DROP VIEW stream_hourly, streams_by_artist_hour, streams_by_artist_day_platform, streams_by_artist_day_country,
          streams_by_artist_day_demographics, streams_by_artist_day_track;
DROP VIEW revenue_hourly, revenue_by_artist_day;
DROP VIEW social_hourly, social_by_artist_day;

-- Streams.
ALTER TABLE stream_hourly_delta RENAME TO stream_hourly_delta_text;
CREATE TABLE stream_hourly_delta (
    artist_id_ref bigint      NOT NULL,
    hour          timestamptz NOT NULL,
    track_id_ref  bigint      NOT NULL,
    platform_ref  bigint      NOT NULL,
    country_ref   bigint      NOT NULL,
    age_range_ref bigint      NOT NULL,
    gender_ref    bigint      NOT NULL,
    streams       bigint      NOT NULL DEFAULT 0,
    skips         bigint      NOT NULL DEFAULT 0,
    listening_ms  bigint      NOT NULL DEFAULT 0
);
CREATE TABLE stream_hourly_delta_values (id bigint NOT NULL, value text NOT NULL);
INSERT INTO stream_hourly_delta_values
    SELECT f.base | row_number() OVER (), v.value
    FROM (SELECT nextval('delta_flushes') << 32 AS base) f,
         (SELECT DISTINCT unnest(ARRAY[artist_id, track_id, platform, country, age_range, gender]) AS value
          FROM stream_hourly_delta_text) v;
INSERT INTO stream_hourly_delta
    SELECT a.id, d.hour, t.id, p.id, c.id, ar.id, g.id, d.streams, d.skips, d.listening_ms
    FROM stream_hourly_delta_text d
    JOIN stream_hourly_delta_values a ON a.value = d.artist_id
    JOIN stream_hourly_delta_values t ON t.value = d.track_id
    JOIN stream_hourly_delta_values p ON p.value = d.platform
    JOIN stream_hourly_delta_values c ON c.value = d.country
    JOIN stream_hourly_delta_values ar ON ar.value = d.age_range
    JOIN stream_hourly_delta_values g ON g.value = d.gender;
DROP TABLE stream_hourly_delta_text;

CREATE VIEW stream_hourly_delta_rows AS
    SELECT a.value AS artist_id, d.hour, t.value AS track_id, p.value AS platform, c.value AS country,
           ar.value AS age_range, g.value AS gender, d.streams, d.skips, d.listening_ms
    FROM stream_hourly_delta d
    JOIN stream_hourly_delta_values a ON a.id = d.artist_id_ref
    JOIN stream_hourly_delta_values t ON t.id = d.track_id_ref
    JOIN stream_hourly_delta_values p ON p.id = d.platform_ref
    JOIN stream_hourly_delta_values c ON c.id = d.country_ref
    JOIN stream_hourly_delta_values ar ON ar.id = d.age_range_ref
    JOIN stream_hourly_delta_values g ON g.id = d.gender_ref;

-- Revenue.
ALTER TABLE revenue_hourly_delta RENAME TO revenue_hourly_delta_text;
CREATE TABLE revenue_hourly_delta (
    artist_id_ref bigint      NOT NULL,
    hour          timestamptz NOT NULL,
    source_ref    bigint      NOT NULL,
    currency_ref  bigint      NOT NULL,
    platform_ref  bigint      NOT NULL,
    track_id_ref  bigint      NOT NULL,
    amount        numeric(38, 6) NOT NULL DEFAULT 0,
    events        bigint      NOT NULL DEFAULT 0
);
CREATE TABLE revenue_hourly_delta_values (id bigint NOT NULL, value text NOT NULL);
INSERT INTO revenue_hourly_delta_values
    SELECT f.base | row_number() OVER (), v.value
    FROM (SELECT nextval('delta_flushes') << 32 AS base) f,
         (SELECT DISTINCT unnest(ARRAY[artist_id, source, currency, platform, track_id]) AS value
          FROM revenue_hourly_delta_text) v;
INSERT INTO revenue_hourly_delta
    SELECT a.id, d.hour, s.id, c.id, p.id, t.id, d.amount, d.events
    FROM revenue_hourly_delta_text d
    JOIN revenue_hourly_delta_values a ON a.value = d.artist_id
    JOIN revenue_hourly_delta_values s ON s.value = d.source
    JOIN revenue_hourly_delta_values c ON c.value = d.currency
    JOIN revenue_hourly_delta_values p ON p.value = d.platform
    JOIN revenue_hourly_delta_values t ON t.value = d.track_id;
DROP TABLE revenue_hourly_delta_text;

CREATE VIEW revenue_hourly_delta_rows AS
    SELECT a.value AS artist_id, d.hour, s.value AS source, c.value AS currency, p.value AS platform,
           t.value AS track_id, d.amount, d.events
    FROM revenue_hourly_delta d
    JOIN revenue_hourly_delta_values a ON a.id = d.artist_id_ref
    JOIN revenue_hourly_delta_values s ON s.id = d.source_ref
    JOIN revenue_hourly_delta_values c ON c.id = d.currency_ref
    JOIN revenue_hourly_delta_values p ON p.id = d.platform_ref
    JOIN revenue_hourly_delta_values t ON t.id = d.track_id_ref;

-- Social.
ALTER TABLE social_hourly_delta RENAME TO social_hourly_delta_text;
CREATE TABLE social_hourly_delta (
    artist_id_ref bigint      NOT NULL,
    hour          timestamptz NOT NULL,
    platform_ref  bigint      NOT NULL,
    action_ref    bigint      NOT NULL,
    count         bigint      NOT NULL DEFAULT 0
);
CREATE TABLE social_hourly_delta_values (id bigint NOT NULL, value text NOT NULL);
INSERT INTO social_hourly_delta_values
    SELECT f.base | row_number() OVER (), v.value
    FROM (SELECT nextval('delta_flushes') << 32 AS base) f,
         (SELECT DISTINCT unnest(ARRAY[artist_id, platform, action]) AS value FROM social_hourly_delta_text) v;
INSERT INTO social_hourly_delta
    SELECT a.id, d.hour, p.id, x.id, d.count
    FROM social_hourly_delta_text d
    JOIN social_hourly_delta_values a ON a.value = d.artist_id
    JOIN social_hourly_delta_values p ON p.value = d.platform
    JOIN social_hourly_delta_values x ON x.value = d.action;
DROP TABLE social_hourly_delta_text;

CREATE VIEW social_hourly_delta_rows AS
    SELECT a.value AS artist_id, d.hour, p.value AS platform, x.value AS action, d.count
    FROM social_hourly_delta d
    JOIN social_hourly_delta_values a ON a.id = d.artist_id_ref
    JOIN social_hourly_delta_values p ON p.id = d.platform_ref
    JOIN social_hourly_delta_values x ON x.id = d.action_ref;

-- The views, as migration 0010 made them, over the delta rows with their texts.
CREATE VIEW stream_hourly AS SELECT * FROM stream_hourly_merged UNION ALL SELECT * FROM stream_hourly_delta_rows;
CREATE VIEW revenue_hourly AS SELECT * FROM revenue_hourly_merged UNION ALL SELECT * FROM revenue_hourly_delta_rows;
CREATE VIEW social_hourly AS SELECT * FROM social_hourly_merged UNION ALL SELECT * FROM social_hourly_delta_rows;

CREATE VIEW streams_by_artist_hour AS
    SELECT * FROM streams_by_artist_hour_merged
    UNION ALL
    SELECT artist_id, hour, sum(streams)::bigint, sum(skips)::bigint, sum(listening_ms)::bigint
    FROM stream_hourly_delta_rows GROUP BY artist_id, hour;

CREATE VIEW streams_by_artist_day_platform AS
    SELECT * FROM streams_by_artist_day_platform_merged
    UNION ALL
    SELECT artist_id, (hour AT TIME ZONE 'UTC')::date, platform, sum(streams)::bigint, sum(skips)::bigint, sum(listening_ms)::bigint
    FROM stream_hourly_delta_rows GROUP BY artist_id, (hour AT TIME ZONE 'UTC')::date, platform;

CREATE VIEW streams_by_artist_day_country AS
    SELECT * FROM streams_by_artist_day_country_merged
    UNION ALL
    SELECT artist_id, (hour AT TIME ZONE 'UTC')::date, country, sum(streams)::bigint, sum(skips)::bigint, sum(listening_ms)::bigint
    FROM stream_hourly_delta_rows GROUP BY artist_id, (hour AT TIME ZONE 'UTC')::date, country;

CREATE VIEW streams_by_artist_day_demographics AS
    SELECT * FROM streams_by_artist_day_demographics_merged
    UNION ALL
    SELECT artist_id, (hour AT TIME ZONE 'UTC')::date, age_range, gender, sum(streams)::bigint, sum(skips)::bigint, sum(listening_ms)::bigint
    FROM stream_hourly_delta_rows GROUP BY artist_id, (hour AT TIME ZONE 'UTC')::date, age_range, gender;

CREATE VIEW streams_by_artist_day_track AS
    SELECT * FROM streams_by_artist_day_track_merged
    UNION ALL
    SELECT artist_id, (hour AT TIME ZONE 'UTC')::date, track_id, sum(streams)::bigint, sum(skips)::bigint, sum(listening_ms)::bigint
    FROM stream_hourly_delta_rows GROUP BY artist_id, (hour AT TIME ZONE 'UTC')::date, track_id;

CREATE VIEW revenue_by_artist_day AS
    SELECT * FROM revenue_by_artist_day_merged
    UNION ALL
    SELECT artist_id, (hour AT TIME ZONE 'UTC')::date, source, currency, sum(amount)::numeric(38, 6), sum(events)::bigint
    FROM revenue_hourly_delta_rows GROUP BY artist_id, (hour AT TIME ZONE 'UTC')::date, source, currency;

CREATE VIEW social_by_artist_day AS
    SELECT * FROM social_by_artist_day_merged
    UNION ALL
    SELECT artist_id, (hour AT TIME ZONE 'UTC')::date, platform, action, sum(count)::bigint
    FROM social_hourly_delta_rows GROUP BY artist_id, (hour AT TIME ZONE 'UTC')::date, platform, action;
