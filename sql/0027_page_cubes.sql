-- Issue 41: page events (docs/events.md, "Page events") are counted in a dataset of their own, `page`, stored as the
-- other datasets are (migrations 0019, 0020, 0025): `page_hourly_days` holds each artist-day's full-dimension rows by
-- quarter hour in one block, the dashboard cubes `page_by_artist_day*_days` their day rows, `<cube>_months` their
-- month rows, `page_daily_rolled` the daily rows retention rolls the quarter hours into; each has a view of its rows
-- for SQL of its own. A dimension a type does not have is '' (a section_view's block_id); its one measure is `events`.

SELECT pg_advisory_xact_lock(x'6261636B62656174'::bigint);

DO $$
DECLARE
    cube text;
BEGIN
    FOREACH cube IN ARRAY ARRAY['page_hourly', 'page_by_artist_day', 'page_by_artist_day_cta', 'page_by_artist_day_interaction',
                                'page_by_artist_day_section', 'page_by_artist_day_block'] LOOP
        EXECUTE format('CREATE TABLE %I (artist_id text NOT NULL, day date NOT NULL, block bytea NOT NULL, PRIMARY KEY (artist_id, day)) PARTITION BY RANGE (day)',
                       cube || '_days');
        BEGIN
            EXECUTE format('ALTER TABLE %I ALTER COLUMN block SET COMPRESSION lz4', cube || '_days');
        EXCEPTION WHEN feature_not_supported THEN
            NULL;
        END;
        IF cube <> 'page_hourly' THEN
            EXECUTE format('CREATE TABLE %I (artist_id text NOT NULL, day date NOT NULL, block bytea NOT NULL, PRIMARY KEY (artist_id, day))',
                           cube || '_months');
        END IF;
    END LOOP;
END $$;

CREATE TABLE page_daily_rolled (
    artist_id    text   NOT NULL,
    day          date   NOT NULL,
    portfolio_id text   NOT NULL,
    type         text   NOT NULL,
    section_id   text   NOT NULL,
    block_id     text   NOT NULL,
    block_type   text   NOT NULL,
    action       text   NOT NULL,
    action_type  text   NOT NULL,
    referrer     text   NOT NULL,
    country      text   NOT NULL,
    events       bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (artist_id, day, portfolio_id, type, section_id, block_id, block_type, action, action_type, referrer, country)
) PARTITION BY RANGE (day);

CREATE VIEW page_hourly AS
    SELECT d.artist_id,
           (d.day::timestamp + (r.row_slot / 4) * interval '1 hour') AT TIME ZONE 'UTC' AS hour,
           r.row_values[1] AS portfolio_id,
           r.row_values[2] AS type,
           r.row_values[3] AS section_id,
           r.row_values[4] AS block_id,
           r.row_values[5] AS block_type,
           r.row_values[6] AS action,
           r.row_values[7] AS action_type,
           r.row_values[8] AS referrer,
           r.row_values[9] AS country,
           r.row_sums[1]::bigint AS events,
           d.day,
           (d.day::timestamp + r.row_slot * interval '15 minutes') AT TIME ZONE 'UTC' AS quarter_start
    FROM page_hourly_days d, backbeat_block_slots(d.block, 96, 9, 1) r;

CREATE VIEW page_daily AS
    SELECT artist_id, hour, day, portfolio_id, type, section_id, block_id, block_type, action, action_type, referrer, country, events
    FROM page_hourly
    UNION ALL
    SELECT artist_id, day::timestamp AT TIME ZONE 'UTC', day, portfolio_id, type, section_id, block_id, block_type, action, action_type,
           referrer, country, events
    FROM page_daily_rolled;

CREATE VIEW page_by_artist_day AS
    SELECT d.artist_id, d.day, r.row_values[1] AS portfolio_id, r.row_values[2] AS type, r.row_sums[1]::bigint AS events
    FROM page_by_artist_day_days d, backbeat_block_rows(d.block, false, 2, 1) r;

CREATE VIEW page_by_artist_day_cta AS
    SELECT d.artist_id, d.day, r.row_values[1] AS portfolio_id, r.row_values[2] AS action_type, r.row_sums[1]::bigint AS events
    FROM page_by_artist_day_cta_days d, backbeat_block_rows(d.block, false, 2, 1) r;

CREATE VIEW page_by_artist_day_interaction AS
    SELECT d.artist_id, d.day, r.row_values[1] AS block_type, r.row_values[2] AS action, r.row_sums[1]::bigint AS events
    FROM page_by_artist_day_interaction_days d, backbeat_block_rows(d.block, false, 2, 1) r;

CREATE VIEW page_by_artist_day_section AS
    SELECT d.artist_id, d.day, r.row_values[1] AS portfolio_id, r.row_values[2] AS section_id, r.row_sums[1]::bigint AS events
    FROM page_by_artist_day_section_days d, backbeat_block_rows(d.block, false, 2, 1) r;

CREATE VIEW page_by_artist_day_block AS
    SELECT d.artist_id, d.day, r.row_values[1] AS portfolio_id, r.row_values[2] AS block_id, r.row_sums[1]::bigint AS events
    FROM page_by_artist_day_block_days d, backbeat_block_rows(d.block, false, 2, 1) r;
