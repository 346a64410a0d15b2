"""DuckDB materializing Backbeat's tables from the same NDJSON file, for scripts/bench.

Usage: duckdb_rollup.py EVENTS.ndjson [THREADS] [DATABASE]

Every table Backbeat's PostgreSQL holds for dashboards is created with `CREATE TABLE ... AS`, so that every
aggregate is computed and stored (a `count(*)` over a subquery would let the optimizer drop them): streams per
artist, quarter hour, track, platform, country, age range and gender (streams, skips, listening ms); revenue per
artist, quarter hour, source, currency, platform and track (exact sum, events); social per artist, quarter hour,
platform and action; approximate distinct listeners per artist-day and track-day (DuckDB keeps the estimate,
Backbeat a mergeable sketch); and the dashboard cubes derived from them, one table each as in PostgreSQL. The full
tables are kept by quarter hour, as Backbeat keeps them (the grain that tiles every zone's days); the cubes by hour
or day. With DATABASE (a file), the tables are written there and `CHECKPOINT` makes them durable inside the timing;
without it they stay in memory (beside `backbeat rollup`, which keeps its cubes in memory too).

Prints a JSON report: seconds from opening the file to having every table (durable when DATABASE is given), events
per second, and the row count of each table (counted after the timing).
"""
import json
import sys
import time

import duckdb

path = sys.argv[1]
threads = int(sys.argv[2]) if len(sys.argv) > 2 else 2
database = sys.argv[3] if len(sys.argv) > 3 else ":memory:"

con = duckdb.connect(database)
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
stream_sums = """count(*) FILTER (WHERE duration_ms IS NULL OR duration_ms >= 30000) AS streams,
                 count(*) FILTER (WHERE duration_ms < 30000) AS skips, sum(coalesce(duration_ms, 0)) AS listening_ms"""
rolled = """sum(streams) AS streams, sum(skips) AS skips, sum(listening_ms) AS listening_ms"""
# The quarter hour an event falls in (in UTC, whatever the session's zone).
quarter = "to_timestamp(floor(epoch(occurred_at) / 900) * 900) AS quarter_start"
full = {
    "stream_hourly": f"""
        SELECT artist_id, {quarter}, track_id, platform, coalesce(country, 'ZZ') AS country,
               coalesce(age_range, 'unknown') AS age_range, coalesce(gender, 'unknown') AS gender, {stream_sums}
        FROM ev WHERE type = 'stream' GROUP BY ALL""",
    "revenue_hourly": f"""
        SELECT artist_id, {quarter}, source, currency, coalesce(platform, '') AS platform,
               coalesce(track_id, '') AS track_id, sum(amount::DECIMAL(38, 6)) AS amount, count(*) AS events
        FROM ev WHERE type = 'revenue' GROUP BY ALL""",
    "social_hourly": f"""
        SELECT artist_id, {quarter}, platform, action, sum(coalesce(count, 1)) AS count
        FROM ev WHERE type = 'social' GROUP BY ALL""",
    "artist_listeners_daily": """
        SELECT artist_id, date_trunc('day', occurred_at) AS day, approx_count_distinct(listener_id) AS listeners
        FROM ev WHERE type = 'stream' AND listener_id IS NOT NULL GROUP BY ALL""",
    "track_listeners_daily": """
        SELECT artist_id, track_id, date_trunc('day', occurred_at) AS day, approx_count_distinct(listener_id) AS listeners
        FROM ev WHERE type = 'stream' AND listener_id IS NOT NULL GROUP BY ALL""",
}
# The dashboard cubes, each from its full table (as Backbeat derives them from its full rows).
derived = {
    "streams_by_artist_hour": f"SELECT artist_id, epoch(quarter_start)::BIGINT // 3600 AS hour, {rolled} FROM stream_hourly GROUP BY ALL",
    "streams_by_artist_day_platform": f"SELECT artist_id, epoch(quarter_start)::BIGINT // 86400 AS day, platform, {rolled} FROM stream_hourly GROUP BY ALL",
    "streams_by_artist_day_country": f"SELECT artist_id, epoch(quarter_start)::BIGINT // 86400 AS day, country, {rolled} FROM stream_hourly GROUP BY ALL",
    "streams_by_artist_day_demographics": f"SELECT artist_id, epoch(quarter_start)::BIGINT // 86400 AS day, age_range, gender, {rolled} FROM stream_hourly GROUP BY ALL",
    "streams_by_artist_day_track": f"SELECT artist_id, epoch(quarter_start)::BIGINT // 86400 AS day, track_id, {rolled} FROM stream_hourly GROUP BY ALL",
    "revenue_by_artist_day": "SELECT artist_id, epoch(quarter_start)::BIGINT // 86400 AS day, source, currency, sum(amount) AS amount, sum(events) AS events FROM revenue_hourly GROUP BY ALL",
    "social_by_artist_day": "SELECT artist_id, epoch(quarter_start)::BIGINT // 86400 AS day, platform, action, sum(count) AS count FROM social_hourly GROUP BY ALL",
}
for name, query in {**full, **derived}.items():
    con.execute(f"CREATE TABLE {name} AS {query}")
if database != ":memory:":
    con.execute("CHECKPOINT")
seconds = time.perf_counter() - started
rows = {name: con.execute(f"SELECT count(*) FROM {name}").fetchone()[0] for name in full}
cube_rows = {name: con.execute(f"SELECT count(*) FROM {name}").fetchone()[0] for name in derived}
print(json.dumps({"engine": f"duckdb {duckdb.__version__}", "threads": threads, "events": events,
                  "database": "file" if database != ":memory:" else "memory",
                  "seconds": seconds, "events_per_second": events / seconds, "rows": rows,
                  "cube_rows": cube_rows}, sort_keys=True))
