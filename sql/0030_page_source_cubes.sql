-- Issue 41: where a portfolio page's visitors come from. Two dashboard cubes of the `page` dataset count page events
-- by day, page and type, one by the referrer's host (`page_by_artist_day_referrer`), one by the visitor's country
-- (`page_by_artist_day_country`), stored as the other page cubes are (migration 0027): the artist-day's rows in one
-- block in `<cube>_days` (by month partition), the artist-month's in `<cube>_months`, and a view of the rows each.
-- `GET /v1/artists/{id}/page/sources` reads them; memory holds them as it holds every dashboard cube.
--
-- Both are filled from the page events counted so far (`page_daily`: the detail by day, and the daily rows retention
-- rolled it into), and their month rows for every month rolled so far (`month_rolls`), so that a database upgraded
-- with page events answers as one that counted them with these cubes. The blocks are written as version 1
-- (`backbeat_block`, migration 0019), which Backbeat reads and rewrites as version 2 when a flush merges into them.

SELECT pg_advisory_xact_lock(x'6261636B62656174'::bigint);

DO $$
DECLARE
    cube text;
BEGIN
    FOREACH cube IN ARRAY ARRAY['page_by_artist_day_referrer', 'page_by_artist_day_country'] LOOP
        EXECUTE format('CREATE TABLE %I (artist_id text NOT NULL, day date NOT NULL, block bytea NOT NULL, PRIMARY KEY (artist_id, day)) PARTITION BY RANGE (day)',
                       cube || '_days');
        BEGIN
            EXECUTE format('ALTER TABLE %I ALTER COLUMN block SET COMPRESSION lz4', cube || '_days');
        EXCEPTION WHEN feature_not_supported THEN
            NULL;
        END;
        EXECUTE format('CREATE TABLE %I (artist_id text NOT NULL, day date NOT NULL, block bytea NOT NULL, PRIMARY KEY (artist_id, day))',
                       cube || '_months');
    END LOOP;
END $$;

CREATE VIEW page_by_artist_day_referrer AS
    SELECT d.artist_id, d.day, r.row_values[1] AS portfolio_id, r.row_values[2] AS type, r.row_values[3] AS referrer,
           r.row_sums[1]::bigint AS events
    FROM page_by_artist_day_referrer_days d, backbeat_block_rows(d.block, false, 3, 1) r;

CREATE VIEW page_by_artist_day_country AS
    SELECT d.artist_id, d.day, r.row_values[1] AS portfolio_id, r.row_values[2] AS type, r.row_values[3] AS country,
           r.row_sums[1]::bigint AS events
    FROM page_by_artist_day_country_days d, backbeat_block_rows(d.block, false, 3, 1) r;

-- Fills `cube` from `page_daily` grouped by page, type and `source` (a column of it): a block per artist-day, and per
-- artist-month of the months rolled.
CREATE FUNCTION pg_temp.backbeat_fill_page_sources(cube text, source text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    month date;
    rolled_to date := (SELECT rolled_to FROM month_rolls);
    filled bigint;
BEGIN
    EXECUTE format(
        'CREATE TEMPORARY TABLE source_rows AS
         SELECT artist_id, day, portfolio_id, type, %I AS source, sum(events)::numeric AS events
         FROM page_daily GROUP BY artist_id, day, portfolio_id, type, %I', source, source);
    FOR month IN SELECT DISTINCT date_trunc('month', day)::date FROM source_rows LOOP
        PERFORM backbeat_month_partition(cube || '_days', month);
    END LOOP;
    EXECUTE format(
        'INSERT INTO %I
         SELECT artist_id, day, backbeat_block(NULL::smallint[], ARRAY(SELECT unnest(vals)), sums, 3, 1)
         FROM (SELECT artist_id, day, array_agg(ARRAY[portfolio_id, type, source] ORDER BY portfolio_id, type, source) AS vals,
                      array_agg(events ORDER BY portfolio_id, type, source) AS sums
               FROM source_rows GROUP BY artist_id, day) d
         ORDER BY artist_id, day', cube || '_days');
    GET DIAGNOSTICS filled = ROW_COUNT;
    IF rolled_to IS NOT NULL THEN
        EXECUTE format(
            'INSERT INTO %I
             SELECT artist_id, month, backbeat_block(NULL::smallint[], ARRAY(SELECT unnest(vals)), sums, 3, 1)
             FROM (SELECT artist_id, month, array_agg(ARRAY[portfolio_id, type, source] ORDER BY portfolio_id, type, source) AS vals,
                          array_agg(events ORDER BY portfolio_id, type, source) AS sums
                   FROM (SELECT artist_id, date_trunc(''month'', day)::date AS month, portfolio_id, type, source, sum(events) AS events
                         FROM source_rows WHERE day < %L GROUP BY 1, 2, 3, 4, 5) m
                   GROUP BY artist_id, month) d
             ORDER BY artist_id, month', cube || '_months', rolled_to);
    END IF;
    DROP TABLE source_rows;
    RAISE NOTICE '%: % artist-days filled from page_daily', cube, filled;
END $$;

SELECT pg_temp.backbeat_fill_page_sources('page_by_artist_day_referrer', 'referrer');
SELECT pg_temp.backbeat_fill_page_sources('page_by_artist_day_country', 'country');
DROP FUNCTION pg_temp.backbeat_fill_page_sources(text, text);
