-- Issue 41: unique visitors of page events, stored as the unique listeners are (migrations 0018 and 0020): per
-- artist and (local) day in `artist_visitors_days`, per page (`portfolio_id`) and day in `page_visitors_days` (the
-- day's page ids and their sketches in two arrays), each with its month rows; a flush unions its sketches into them
-- (`Store.mergeSketches`). `artist_visitors_daily` and `page_visitors_daily` are their views.

SELECT pg_advisory_xact_lock(x'6261636B62656174'::bigint);

CREATE TABLE artist_visitors_days (
    artist_id text NOT NULL, day date NOT NULL, visitors hll(14, 5) NOT NULL, PRIMARY KEY (artist_id, day)
) PARTITION BY RANGE (day);

CREATE TABLE page_visitors_days (
    artist_id text NOT NULL, day date NOT NULL, portfolio_id text[] NOT NULL, visitors hll(14, 5)[] NOT NULL,
    PRIMARY KEY (artist_id, day)
) PARTITION BY RANGE (day);

CREATE TABLE artist_visitors_months (
    artist_id text NOT NULL, day date NOT NULL, visitors hll(14, 5) NOT NULL, PRIMARY KEY (artist_id, day));
CREATE TABLE page_visitors_months (
    artist_id text NOT NULL, day date NOT NULL, portfolio_id text[] NOT NULL, visitors hll(14, 5)[] NOT NULL,
    PRIMARY KEY (artist_id, day));

CREATE VIEW artist_visitors_daily AS
    SELECT artist_id, day, visitors FROM artist_visitors_days;

CREATE VIEW page_visitors_daily AS
    SELECT d.artist_id, t.portfolio_id, d.day, t.visitors
    FROM page_visitors_days d, unnest(d.portfolio_id, d.visitors) AS t(portfolio_id, visitors);
