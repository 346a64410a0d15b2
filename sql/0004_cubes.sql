-- Cubes: the rollups a dashboard asks for, each small enough that a year of one artist is a few thousand rows.
-- Written in the same flush transaction as the full-dimension hourly tables; the query planner picks the smallest
-- cube that has every dimension a query groups by or filters on.
CREATE TABLE streams_by_artist_hour (
    artist_id    text        NOT NULL,
    hour         timestamptz NOT NULL,
    streams      bigint      NOT NULL DEFAULT 0,
    skips        bigint      NOT NULL DEFAULT 0,
    listening_ms bigint      NOT NULL DEFAULT 0,
    PRIMARY KEY (artist_id, hour)
);

CREATE TABLE streams_by_artist_day_platform (
    artist_id    text   NOT NULL,
    day          date   NOT NULL,
    platform     text   NOT NULL,
    streams      bigint NOT NULL DEFAULT 0,
    skips        bigint NOT NULL DEFAULT 0,
    listening_ms bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (artist_id, day, platform)
);

CREATE TABLE streams_by_artist_day_country (
    artist_id    text   NOT NULL,
    day          date   NOT NULL,
    country      text   NOT NULL,
    streams      bigint NOT NULL DEFAULT 0,
    skips        bigint NOT NULL DEFAULT 0,
    listening_ms bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (artist_id, day, country)
);

CREATE TABLE streams_by_artist_day_demographics (
    artist_id    text   NOT NULL,
    day          date   NOT NULL,
    age_range    text   NOT NULL,
    gender       text   NOT NULL,
    streams      bigint NOT NULL DEFAULT 0,
    skips        bigint NOT NULL DEFAULT 0,
    listening_ms bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (artist_id, day, age_range, gender)
);

CREATE TABLE streams_by_artist_day_track (
    artist_id    text   NOT NULL,
    day          date   NOT NULL,
    track_id     text   NOT NULL,
    streams      bigint NOT NULL DEFAULT 0,
    skips        bigint NOT NULL DEFAULT 0,
    listening_ms bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (artist_id, day, track_id)
);

CREATE TABLE revenue_by_artist_day (
    artist_id text           NOT NULL,
    day       date           NOT NULL,
    source    text           NOT NULL,
    currency  text           NOT NULL,
    amount    numeric(38, 6) NOT NULL DEFAULT 0,
    events    bigint         NOT NULL DEFAULT 0,
    PRIMARY KEY (artist_id, day, source, currency)
);

CREATE TABLE social_by_artist_day (
    artist_id text   NOT NULL,
    day       date   NOT NULL,
    platform  text   NOT NULL,
    action    text   NOT NULL,
    count     bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (artist_id, day, platform, action)
);

-- Fill the cubes from rows flushed before they existed.
INSERT INTO streams_by_artist_hour
SELECT artist_id, hour, sum(streams), sum(skips), sum(listening_ms) FROM stream_hourly GROUP BY 1, 2;
INSERT INTO streams_by_artist_day_platform
SELECT artist_id, (hour AT TIME ZONE 'UTC')::date, platform, sum(streams), sum(skips), sum(listening_ms) FROM stream_hourly GROUP BY 1, 2, 3;
INSERT INTO streams_by_artist_day_country
SELECT artist_id, (hour AT TIME ZONE 'UTC')::date, country, sum(streams), sum(skips), sum(listening_ms) FROM stream_hourly GROUP BY 1, 2, 3;
INSERT INTO streams_by_artist_day_demographics
SELECT artist_id, (hour AT TIME ZONE 'UTC')::date, age_range, gender, sum(streams), sum(skips), sum(listening_ms) FROM stream_hourly GROUP BY 1, 2, 3, 4;
INSERT INTO streams_by_artist_day_track
SELECT artist_id, (hour AT TIME ZONE 'UTC')::date, track_id, sum(streams), sum(skips), sum(listening_ms) FROM stream_hourly GROUP BY 1, 2, 3;
INSERT INTO revenue_by_artist_day
SELECT artist_id, (hour AT TIME ZONE 'UTC')::date, source, currency, sum(amount), sum(events) FROM revenue_hourly GROUP BY 1, 2, 3, 4;
INSERT INTO social_by_artist_day
SELECT artist_id, (hour AT TIME ZONE 'UTC')::date, platform, action, sum(count) FROM social_hourly GROUP BY 1, 2, 3, 4;
