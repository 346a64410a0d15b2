-- Hourly rollups, one table per event family. Absent optional dimensions are stored as ''.
CREATE TABLE stream_hourly (
    artist_id    text        NOT NULL,
    hour         timestamptz NOT NULL,
    track_id     text        NOT NULL,
    platform     text        NOT NULL,
    country      text        NOT NULL,
    age_range    text        NOT NULL,
    gender       text        NOT NULL,
    streams      bigint      NOT NULL DEFAULT 0,
    skips        bigint      NOT NULL DEFAULT 0,
    listening_ms bigint      NOT NULL DEFAULT 0,
    PRIMARY KEY (artist_id, hour, track_id, platform, country, age_range, gender)
);

CREATE TABLE revenue_hourly (
    artist_id text           NOT NULL,
    hour      timestamptz    NOT NULL,
    source    text           NOT NULL,
    currency  text           NOT NULL,
    platform  text           NOT NULL,
    track_id  text           NOT NULL,
    amount    numeric(38, 6) NOT NULL DEFAULT 0,
    events    bigint         NOT NULL DEFAULT 0,
    PRIMARY KEY (artist_id, hour, source, currency, platform, track_id)
);

CREATE TABLE social_hourly (
    artist_id text        NOT NULL,
    hour      timestamptz NOT NULL,
    platform  text        NOT NULL,
    action    text        NOT NULL,
    count     bigint      NOT NULL DEFAULT 0,
    PRIMARY KEY (artist_id, hour, platform, action)
);
