-- Append-only flushes. Each aggregate table becomes two: `<name>_merged` (one row per key, the old table with its data
-- and primary key) and `<name>_delta` (no key, no index: a flush only COPYs its rows there, one per key of the batch).
-- The view `<name>` is the two together: every reader sums (sum, hll_union_agg), so it answers as the old table did.
-- Compaction (`Store.compact`) moves delta rows into `_merged` in the background, summing them per key.

ALTER TABLE stream_hourly RENAME TO stream_hourly_merged;
CREATE TABLE stream_hourly_delta (LIKE stream_hourly_merged);
CREATE VIEW stream_hourly AS SELECT * FROM stream_hourly_merged UNION ALL SELECT * FROM stream_hourly_delta;

ALTER TABLE revenue_hourly RENAME TO revenue_hourly_merged;
CREATE TABLE revenue_hourly_delta (LIKE revenue_hourly_merged);
CREATE VIEW revenue_hourly AS SELECT * FROM revenue_hourly_merged UNION ALL SELECT * FROM revenue_hourly_delta;

ALTER TABLE social_hourly RENAME TO social_hourly_merged;
CREATE TABLE social_hourly_delta (LIKE social_hourly_merged);
CREATE VIEW social_hourly AS SELECT * FROM social_hourly_merged UNION ALL SELECT * FROM social_hourly_delta;

ALTER TABLE streams_by_artist_hour RENAME TO streams_by_artist_hour_merged;
CREATE TABLE streams_by_artist_hour_delta (LIKE streams_by_artist_hour_merged);
CREATE VIEW streams_by_artist_hour AS SELECT * FROM streams_by_artist_hour_merged UNION ALL SELECT * FROM streams_by_artist_hour_delta;

ALTER TABLE streams_by_artist_day_platform RENAME TO streams_by_artist_day_platform_merged;
CREATE TABLE streams_by_artist_day_platform_delta (LIKE streams_by_artist_day_platform_merged);
CREATE VIEW streams_by_artist_day_platform AS SELECT * FROM streams_by_artist_day_platform_merged UNION ALL SELECT * FROM streams_by_artist_day_platform_delta;

ALTER TABLE streams_by_artist_day_country RENAME TO streams_by_artist_day_country_merged;
CREATE TABLE streams_by_artist_day_country_delta (LIKE streams_by_artist_day_country_merged);
CREATE VIEW streams_by_artist_day_country AS SELECT * FROM streams_by_artist_day_country_merged UNION ALL SELECT * FROM streams_by_artist_day_country_delta;

ALTER TABLE streams_by_artist_day_demographics RENAME TO streams_by_artist_day_demographics_merged;
CREATE TABLE streams_by_artist_day_demographics_delta (LIKE streams_by_artist_day_demographics_merged);
CREATE VIEW streams_by_artist_day_demographics AS SELECT * FROM streams_by_artist_day_demographics_merged UNION ALL SELECT * FROM streams_by_artist_day_demographics_delta;

ALTER TABLE streams_by_artist_day_track RENAME TO streams_by_artist_day_track_merged;
CREATE TABLE streams_by_artist_day_track_delta (LIKE streams_by_artist_day_track_merged);
CREATE VIEW streams_by_artist_day_track AS SELECT * FROM streams_by_artist_day_track_merged UNION ALL SELECT * FROM streams_by_artist_day_track_delta;

ALTER TABLE revenue_by_artist_day RENAME TO revenue_by_artist_day_merged;
CREATE TABLE revenue_by_artist_day_delta (LIKE revenue_by_artist_day_merged);
CREATE VIEW revenue_by_artist_day AS SELECT * FROM revenue_by_artist_day_merged UNION ALL SELECT * FROM revenue_by_artist_day_delta;

ALTER TABLE social_by_artist_day RENAME TO social_by_artist_day_merged;
CREATE TABLE social_by_artist_day_delta (LIKE social_by_artist_day_merged);
CREATE VIEW social_by_artist_day AS SELECT * FROM social_by_artist_day_merged UNION ALL SELECT * FROM social_by_artist_day_delta;

ALTER TABLE artist_listeners_daily RENAME TO artist_listeners_daily_merged;
CREATE TABLE artist_listeners_daily_delta (LIKE artist_listeners_daily_merged);
CREATE VIEW artist_listeners_daily AS SELECT * FROM artist_listeners_daily_merged UNION ALL SELECT * FROM artist_listeners_daily_delta;

ALTER TABLE track_listeners_daily RENAME TO track_listeners_daily_merged;
CREATE TABLE track_listeners_daily_delta (LIKE track_listeners_daily_merged);
CREATE VIEW track_listeners_daily AS SELECT * FROM track_listeners_daily_merged UNION ALL SELECT * FROM track_listeners_daily_delta;
