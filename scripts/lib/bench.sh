# Helpers of the benchmark scripts (scripts/bench, scripts/bench-against, scripts/bench-zones).

# bc prints 0.85 as .85, which JSON does not take: every number it computes goes through printf.
calc() { printf '%.3f' "$(echo "$1" | bc -l)"; }
# Seconds since a `date +%s.%N` reading.
since() { calc "$(date +%s.%N) - $1"; }

# The one-line answer to `sql` from the psql session running as the coprocess PSQL (`coproc PSQL { psql URL -qAt; }`):
# polling through one session, since a psql process per poll costs about 60 ms of CPU, which on two cores would
# load the machine during the very run it measures.
ask() {  # sql
  echo "$1;" >&"${PSQL[1]}"
  IFS= read -r -t 60 answer <&"${PSQL[0]}" || { echo "psql did not answer: $1" >&2; return 1; }
  echo "$answer"
}

# A fresh database for one run, on the PostgreSQL that pg_start started: its URL.
fresh_database() {  # name
  PGOPTIONS='-c client_min_messages=warning' psql "$BACKBEAT_POSTGRES_URL" -qc "DROP DATABASE IF EXISTS $1 WITH (FORCE)" -qc "CREATE DATABASE $1"
  echo "${BACKBEAT_POSTGRES_URL%/*}/$1"
}

# The odd-numbered artists' zones (100 of `generate --artists 200`), of every kind of offset (+5:45, +5:30, -8/-7
# with daylight saving, +12:45/+13:45, +9:30/+10:30, +1/+2, -3:30/-2:30, +8), set in the database at URL.
set_zones() {  # url
  psql "$1" -qc "INSERT INTO artist_zones (artist_id, zone)
    SELECT 'artist-' || lpad(n::text, 4, '0'),
           (ARRAY['Asia/Kathmandu', 'Asia/Kolkata', 'America/Los_Angeles', 'Pacific/Chatham', 'Australia/Adelaide',
                  'Europe/Berlin', 'America/St_Johns', 'Asia/Shanghai'])[(n / 2) % 8 + 1]
    FROM generate_series(1, 199, 2) n"
}
