-- Retention (docs/operations.md, "Retention"). Full-dimension hourly detail is kept `--detail-days`; a month of it
-- older than that is summed into daily rows (`<full>_daily_rolled`, partitioned by month like every merged table)
-- and its hourly partition dropped, in one transaction. `<full>_daily` answers day-grain queries over both: the
-- hourly rows by their UTC day, then the rolled rows. `retention_horizons` says, per table, the first day whose rows
-- are still kept: queries before it are answered from the coarser rows or refused with the reason.

SELECT pg_advisory_xact_lock(x'6261636B62656174'::bigint);

CREATE TABLE stream_daily_rolled (
    artist_id    text   NOT NULL,
    day          date   NOT NULL,
    track_id     text   NOT NULL,
    platform     text   NOT NULL,
    country      text   NOT NULL,
    age_range    text   NOT NULL,
    gender       text   NOT NULL,
    streams      bigint NOT NULL DEFAULT 0,
    skips        bigint NOT NULL DEFAULT 0,
    listening_ms bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (artist_id, day, track_id, platform, country, age_range, gender)
) PARTITION BY RANGE (day);

CREATE TABLE revenue_daily_rolled (
    artist_id text          NOT NULL,
    day       date          NOT NULL,
    source    text          NOT NULL,
    currency  text          NOT NULL,
    platform  text          NOT NULL,
    track_id  text          NOT NULL,
    amount    numeric(38,6) NOT NULL DEFAULT 0,
    events    bigint        NOT NULL DEFAULT 0,
    PRIMARY KEY (artist_id, day, source, currency, platform, track_id)
) PARTITION BY RANGE (day);

CREATE TABLE social_daily_rolled (
    artist_id text   NOT NULL,
    day       date   NOT NULL,
    platform  text   NOT NULL,
    action    text   NOT NULL,
    count     bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (artist_id, day, platform, action)
) PARTITION BY RANGE (day);

-- `hour` of a rolled row is its day's midnight UTC, so that one condition on `hour` selects from both parts (and
-- prunes the hourly partitions).
CREATE VIEW stream_daily AS
    SELECT artist_id, hour, (hour AT TIME ZONE 'UTC')::date AS day, track_id, platform, country, age_range, gender,
           streams, skips, listening_ms
    FROM stream_hourly
    UNION ALL
    SELECT artist_id, day::timestamp AT TIME ZONE 'UTC', day, track_id, platform, country, age_range, gender,
           streams, skips, listening_ms
    FROM stream_daily_rolled;

CREATE VIEW revenue_daily AS
    SELECT artist_id, hour, (hour AT TIME ZONE 'UTC')::date AS day, source, currency, platform, track_id, amount, events
    FROM revenue_hourly
    UNION ALL
    SELECT artist_id, day::timestamp AT TIME ZONE 'UTC', day, source, currency, platform, track_id, amount, events
    FROM revenue_daily_rolled;

CREATE VIEW social_daily AS
    SELECT artist_id, hour, (hour AT TIME ZONE 'UTC')::date AS day, platform, action, count
    FROM social_hourly
    UNION ALL
    SELECT artist_id, day::timestamp AT TIME ZONE 'UTC', day, platform, action, count
    FROM social_daily_rolled;

CREATE TABLE retention_horizons (
    table_name text PRIMARY KEY,
    kept_from  date NOT NULL
);
