#!/usr/bin/env bash
# What a change of an artist's zone costs (issue 40): the busiest artist's stored days counted again in the new zone
# from the quarter-hour detail (`backbeat artist set-zone` without inputs), beside the same change counted again from
# the archive (`backbeat artist set-zone ... ARCHIVE`), alternated. The database holds 35 days of 200 artists
# (BENCH_RECOUNT_EVENTS, default 1000000), replayed from an archive `backbeat generate --archive` wrote; PostgreSQL runs
# with fsync on. Each change is one process run until it exits (its transaction committed). Prints each run's seconds
# and the medians; run from the repository (builds the release binary).
#   BENCH_PAIRS (default 5)
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib/deps.sh
. scripts/lib/postgres.sh

install_deps
export BACKBEAT_PG_FSYNC=on
pairs=${BENCH_PAIRS:-5}
events=${BENCH_RECOUNT_EVENTS:-1000000}
work=$(mktemp -d /tmp/backbeat-recount.XXXXXX)
trap 'pg_stop; rm -rf "$work"' EXIT

echo "building release binary..."
swift build -c release --product backbeat >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
bin="$(swift build -c release --show-bin-path)/backbeat"
pg_start >/dev/null
url="$BACKBEAT_POSTGRES_URL"

# The last 35 days before yesterday: inside the detail serve keeps by default (--detail-days 90).
"$bin" generate --events "$events" --seed 1 --artists 200 --days 35 --start "$(date -u -d '-36 days' +%F)" \
  --archive "$work/archive" 2>/dev/null
"$bin" replay --postgres-url "$url" "$work/archive" --log-level warning 2>/dev/null
artist=$(psql "$url" -Atc "SELECT artist_id FROM stream_hourly_days GROUP BY artist_id ORDER BY sum(length(block)) DESC LIMIT 1")
days=$(psql "$url" -Atc "SELECT count(*) FROM artist_listeners_days WHERE artist_id = '$artist'")
streams=$(psql "$url" -Atc "SELECT sum(streams) FROM streams_by_artist_day_platform WHERE artist_id = '$artist'")
echo "busiest artist $artist: $streams streams on $days days"

# One change, timed: "seconds" (and the command's last line, for the rows moved).
change() {  # zone [archive]
  local start end
  start=$(date +%s.%N)
  "$bin" artist set-zone --postgres-url "$url" --artist "$artist" --zone "$@" --log-level warning >"$work/out" 2>&1
  end=$(date +%s.%N)
  echo "$end - $start" | bc
}

detail=() archive=()
for pair in $(seq "$pairs"); do
  d1=$(change Asia/Kathmandu); d2=$(change America/Los_Angeles)
  detail+=("$d1" "$d2")
  moved=$(grep -o '([0-9]* rows)' "$work/out" || true)
  a1=$(change Asia/Kolkata "$work/archive"); a2=$(change UTC "$work/archive")
  archive+=("$a1" "$a2")
  echo "pair $pair: from the detail $d1 s, $d2 s $moved; from the archive $a1 s, $a2 s"
done
median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "median of $((pairs * 2)) changes: from the detail $(median "${detail[@]}") s, from the archive $(median "${archive[@]}") s"
