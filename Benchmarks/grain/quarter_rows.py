#!/usr/bin/env python3
"""What a 15-minute grain would cost the hour-grained cubes (issue 40): the rows each would hold keyed by the quarter
hour instead of the hour, counted by DuckDB from an NDJSON file of events (`backbeat generate`).

usage: quarter_rows.py EVENTS.ndjson [THREADS]

The rows of a cube are its distinct (artist, time slot, dimension values): the full-dimension hourly tables and the
streams by artist and hour, the cubes `tz=` regroups (Sources/BackbeatCore/Query/Cube.swift). Counted on UTC slots: a
zone moves an artist's slots, not how many there are. Prints a JSON report and a Markdown table."""
import json
import sys

import duckdb

path = sys.argv[1]
threads = int(sys.argv[2]) if len(sys.argv) > 2 else 2
con = duckdb.connect()
con.execute(f"SET threads = {threads}")
con.execute(f"""
    CREATE TABLE ev AS SELECT * FROM read_json('{path}', format = 'newline_delimited', ignore_errors = true,
        columns = {{type: 'VARCHAR', occurred_at: 'TIMESTAMPTZ', artist_id: 'VARCHAR', track_id: 'VARCHAR',
                    platform: 'VARCHAR', country: 'VARCHAR', age_range: 'VARCHAR', gender: 'VARCHAR',
                    source: 'VARCHAR', currency: 'VARCHAR', action: 'VARCHAR'}})
""")
# The hour-grained cubes: the event type each sums and its dimensions besides the artist (as Cube.all lists them).
cubes = {
    "stream_hourly": ("stream", ["track_id", "platform", "country", "age_range", "gender"]),
    "streams_by_artist_hour": ("stream", []),
    "revenue_hourly": ("revenue", ["source", "currency", "platform", "track_id"]),
    "social_hourly": ("social", ["platform", "action"]),
}
slots = {"hour": "date_trunc('hour', occurred_at)", "quarter": "time_bucket(INTERVAL 15 MINUTE, occurred_at)"}
events = dict(con.execute("SELECT type, count(*) FROM ev GROUP BY type").fetchall())
artist_days = con.execute("SELECT count(*) FROM (SELECT DISTINCT artist_id, CAST(occurred_at AS DATE) FROM ev)").fetchone()[0]
report = {"file": path, "events": events, "artist_days": artist_days, "cubes": {}}
for name, (kind, dimensions) in cubes.items():
    columns = "".join(f", coalesce({d}, '')" for d in dimensions)
    rows = {}
    for grain, slot in slots.items():
        rows[grain] = con.execute(
            f"SELECT count(*) FROM (SELECT DISTINCT artist_id, {slot}{columns} FROM ev WHERE type = '{kind}')").fetchone()[0]
    report["cubes"][name] = dict(rows, quarter_over_hour=rows["quarter"] / rows["hour"])
print(json.dumps(report, indent=2))
print()
print(f"| cube ({sum(events.values()):,} events, {artist_days:,} artist-days) | rows by hour | rows by quarter hour | quarter / hour |")
print("|---|---|---|---|")
for name, c in report["cubes"].items():
    print(f"| {name} | {c['hour']:,} | {c['quarter']:,} | {c['quarter_over_hour']:.3f} |")
