"""DuckDB computing Backbeat's rollups from the same NDJSON file, for scripts/bench.

The same cubes as `backbeat rollup`: streams per artist, hour, track, platform, country, age range and gender
(streams, skips, listening ms); revenue per artist, hour, source, currency, platform and track (exact sum, events);
social per artist, hour, platform and action; approximate distinct listeners per artist-day and track-day; and the
dashboard cubes derived from them (GROUPING SETS over artist x day x platform / country / demographics / track, streams
per artist-hour, revenue and social per artist-day), whose row counts are reported apart as `cube_rows`.
Prints a JSON report: seconds from opening the file to having every cube, and events per second.
"""
import json
import sys
import time

import duckdb

path = sys.argv[1]
threads = int(sys.argv[2]) if len(sys.argv) > 2 else 2

con = duckdb.connect()
con.execute(f"SET threads = {threads}")
started = time.perf_counter()
con.execute(f"""
    CREATE TEMP TABLE ev AS SELECT * FROM read_json('{path}', format = 'newline_delimited', ignore_errors = true,
        columns = {{event_id: 'VARCHAR', type: 'VARCHAR', occurred_at: 'TIMESTAMPTZ', artist_id: 'VARCHAR',
                    track_id: 'VARCHAR', platform: 'VARCHAR', listener_id: 'VARCHAR', country: 'VARCHAR',
                    age_range: 'VARCHAR', gender: 'VARCHAR', duration_ms: 'BIGINT', source: 'VARCHAR',
                    amount: 'VARCHAR', currency: 'VARCHAR', action: 'VARCHAR', count: 'BIGINT', post_id: 'VARCHAR'}})
""")
events = con.execute("SELECT count(*) FROM ev").fetchone()[0]
rows = {}
rows["stream_hourly"] = con.execute("""
    SELECT count(*) FROM (
      SELECT artist_id, date_trunc('hour', occurred_at), track_id, platform, coalesce(country, 'ZZ'),
             coalesce(age_range, 'unknown'), coalesce(gender, 'unknown'),
             count(*) FILTER (WHERE duration_ms IS NULL OR duration_ms >= 30000),
             count(*) FILTER (WHERE duration_ms < 30000), sum(coalesce(duration_ms, 0))
      FROM ev WHERE type = 'stream' GROUP BY ALL)""").fetchone()[0]
rows["revenue_hourly"] = con.execute("""
    SELECT count(*) FROM (
      SELECT artist_id, date_trunc('hour', occurred_at), source, currency, coalesce(platform, ''), coalesce(track_id, ''),
             sum(amount::DECIMAL(38, 6)), count(*)
      FROM ev WHERE type = 'revenue' GROUP BY ALL)""").fetchone()[0]
rows["social_hourly"] = con.execute("""
    SELECT count(*) FROM (
      SELECT artist_id, date_trunc('hour', occurred_at), platform, action, sum(coalesce(count, 1))
      FROM ev WHERE type = 'social' GROUP BY ALL)""").fetchone()[0]
rows["artist_listeners_daily"] = con.execute("""
    SELECT count(*) FROM (
      SELECT artist_id, date_trunc('day', occurred_at), approx_count_distinct(listener_id)
      FROM ev WHERE type = 'stream' AND listener_id IS NOT NULL GROUP BY ALL)""").fetchone()[0]
rows["track_listeners_daily"] = con.execute("""
    SELECT count(*) FROM (
      SELECT artist_id, track_id, date_trunc('day', occurred_at), approx_count_distinct(listener_id)
      FROM ev WHERE type = 'stream' AND listener_id IS NOT NULL GROUP BY ALL)""").fetchone()[0]
stream_sums = """count(*) FILTER (WHERE duration_ms IS NULL OR duration_ms >= 30000),
             count(*) FILTER (WHERE duration_ms < 30000), sum(coalesce(duration_ms, 0))"""
cube_rows = {}
cube_rows["streams_by_artist_day_sets"] = con.execute(f"""
    SELECT count(*) FROM (
      SELECT artist_id, date_trunc('day', occurred_at) AS day, platform, coalesce(country, 'ZZ') AS country,
             coalesce(age_range, 'unknown') AS age_range, coalesce(gender, 'unknown') AS gender, track_id, {stream_sums}
      FROM ev WHERE type = 'stream'
      GROUP BY GROUPING SETS ((artist_id, day, platform), (artist_id, day, country), (artist_id, day, age_range, gender),
                              (artist_id, day, track_id)))""").fetchone()[0]
cube_rows["streams_by_artist_hour"] = con.execute(f"""
    SELECT count(*) FROM (SELECT artist_id, date_trunc('hour', occurred_at), {stream_sums}
      FROM ev WHERE type = 'stream' GROUP BY ALL)""").fetchone()[0]
cube_rows["revenue_by_artist_day"] = con.execute("""
    SELECT count(*) FROM (SELECT artist_id, date_trunc('day', occurred_at), source, currency, sum(amount::DECIMAL(38, 6)), count(*)
      FROM ev WHERE type = 'revenue' GROUP BY ALL)""").fetchone()[0]
cube_rows["social_by_artist_day"] = con.execute("""
    SELECT count(*) FROM (SELECT artist_id, date_trunc('day', occurred_at), platform, action, sum(coalesce(count, 1))
      FROM ev WHERE type = 'social' GROUP BY ALL)""").fetchone()[0]
seconds = time.perf_counter() - started
print(json.dumps({"engine": f"duckdb {duckdb.__version__}", "threads": threads, "events": events,
                  "seconds": seconds, "events_per_second": events / seconds, "rows": rows,
                  "cube_rows": cube_rows}, sort_keys=True))
