# Helpers of the benchmark scripts (scripts/bench, scripts/bench-against).

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
