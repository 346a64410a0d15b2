-- Issue 41: unique visitors by where a portfolio view came from. A `portfolio_view`'s visitor is also counted by its
-- sources (`PageSourceKey`): the referrer's host and the visitor's country, of its page and of all the artist's
-- pages. Their sketches are kept among the pages' in `page_visitors_days` (and its month rows), keyed
-- `<portfolio_id>/<source>/<value>` (an empty `portfolio_id`: all pages; an empty value: views without one), so that
-- flushes, month rows, retention, snapshots and rebuilds keep them as they keep the pages'. No `portfolio_id` holds
-- `/`, so the keys part cleanly: `page_visitors_daily` keeps the pages', `page_source_visitors_daily` the sources'.
-- Views of the days before this migration have no source sketches (a rebuild from the archive counts them).

SELECT pg_advisory_xact_lock(x'6261636B62656174'::bigint);

CREATE OR REPLACE VIEW page_visitors_daily AS
    SELECT d.artist_id, t.portfolio_id, d.day, t.visitors
    FROM page_visitors_days d, unnest(d.portfolio_id, d.visitors) AS t(portfolio_id, visitors)
    WHERE strpos(t.portfolio_id, '/') = 0;

CREATE VIEW page_source_visitors_daily AS
    SELECT d.artist_id, nullif(split_part(t.key, '/', 1), '') AS portfolio_id, split_part(t.key, '/', 2) AS source,
           split_part(t.key, '/', 3) AS value, d.day, t.visitors
    FROM page_visitors_days d, unnest(d.portfolio_id, d.visitors) AS t(key, visitors)
    WHERE strpos(t.key, '/') > 0;
