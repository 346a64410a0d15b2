-- Issue 41: the page funnel (docs/events.md, "The page funnel"). Each session's state (`FunnelSession`: the instants
-- of its first event, first portfolio view, first section view and first CTA click) is kept in `page_funnel_sessions`;
-- a flush merges its sessions into their stored states in the transaction that stores its offsets, and writes what
-- each change adds to the funnel (its new counts less its old) to the dataset `funnel`, stored as the others are
-- (migrations 0019, 0020, 0025, 0027): `page_funnel_hourly_days` by quarter hour of the first view,
-- `page_funnel_by_artist_day_days` by day, its month rows, `page_funnel_daily_rolled` for retention, and their views.

SELECT pg_advisory_xact_lock(x'6261636B62656174'::bigint);

CREATE TABLE page_funnel_sessions (
    artist_id     text        NOT NULL,
    portfolio_id  text        NOT NULL,
    session_id    text        NOT NULL,
    started_at    timestamptz NOT NULL,
    first_view    timestamptz,
    first_section timestamptz,
    first_click   timestamptz,
    PRIMARY KEY (artist_id, portfolio_id, session_id)
);

DO $$
DECLARE
    cube text;
BEGIN
    FOREACH cube IN ARRAY ARRAY['page_funnel_hourly', 'page_funnel_by_artist_day'] LOOP
        EXECUTE format('CREATE TABLE %I (artist_id text NOT NULL, day date NOT NULL, block bytea NOT NULL, PRIMARY KEY (artist_id, day)) PARTITION BY RANGE (day)',
                       cube || '_days');
        BEGIN
            EXECUTE format('ALTER TABLE %I ALTER COLUMN block SET COMPRESSION lz4', cube || '_days');
        EXCEPTION WHEN feature_not_supported THEN
            NULL;
        END;
    END LOOP;
END $$;

CREATE TABLE page_funnel_by_artist_day_months (
    artist_id text NOT NULL, day date NOT NULL, block bytea NOT NULL, PRIMARY KEY (artist_id, day));

CREATE TABLE page_funnel_daily_rolled (
    artist_id                  text   NOT NULL,
    day                        date   NOT NULL,
    portfolio_id               text   NOT NULL,
    sessions                   bigint NOT NULL DEFAULT 0,
    sessions_with_section_view bigint NOT NULL DEFAULT 0,
    sessions_with_cta_click    bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (artist_id, day, portfolio_id)
) PARTITION BY RANGE (day);

CREATE VIEW page_funnel_hourly AS
    SELECT d.artist_id,
           (d.day::timestamp + (r.row_slot / 4) * interval '1 hour') AT TIME ZONE 'UTC' AS hour,
           r.row_values[1] AS portfolio_id,
           r.row_sums[1]::bigint AS sessions,
           r.row_sums[2]::bigint AS sessions_with_section_view,
           r.row_sums[3]::bigint AS sessions_with_cta_click,
           d.day,
           (d.day::timestamp + r.row_slot * interval '15 minutes') AT TIME ZONE 'UTC' AS quarter_start
    FROM page_funnel_hourly_days d, backbeat_block_slots(d.block, 96, 1, 3) r;

CREATE VIEW page_funnel_daily AS
    SELECT artist_id, hour, day, portfolio_id, sessions, sessions_with_section_view, sessions_with_cta_click
    FROM page_funnel_hourly
    UNION ALL
    SELECT artist_id, day::timestamp AT TIME ZONE 'UTC', day, portfolio_id, sessions, sessions_with_section_view, sessions_with_cta_click
    FROM page_funnel_daily_rolled;

CREATE VIEW page_funnel_by_artist_day AS
    SELECT d.artist_id, d.day, r.row_values[1] AS portfolio_id, r.row_sums[1]::bigint AS sessions,
           r.row_sums[2]::bigint AS sessions_with_section_view, r.row_sums[3]::bigint AS sessions_with_cta_click
    FROM page_funnel_by_artist_day_days d, backbeat_block_rows(d.block, false, 1, 3) r;
