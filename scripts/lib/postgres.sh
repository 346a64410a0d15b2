# Throw-away PostgreSQL for tests and the demo. Source this file, then call pg_start / pg_stop.
# pg_start sets BACKBEAT_PG_DIR, BACKBEAT_PG_PORT and BACKBEAT_POSTGRES_URL. Its PostgreSQL runs with fsync off
# (a test's database is thrown away); BACKBEAT_PG_FSYNC=on keeps it on, as benchmarks need.

# Where Debian installs PostgreSQL servers, one folder per major version (BACKBEAT_PG_ROOT overrides it, for tests).
pg_root() {
  echo "${BACKBEAT_PG_ROOT:-/usr/lib/postgresql}"
}

# The newest PostgreSQL major version installed under pg_root (15, 16, 17...).
pg_major() {
  local major
  major=$(ls "$(pg_root)" 2>/dev/null | grep -E '^[0-9]+(\.[0-9]+)?$' | sort -V | tail -n 1)
  [ -n "$major" ] || { echo "no PostgreSQL server found under $(pg_root): install Debian's postgresql package" >&2; return 1; }
  echo "$major"
}

# The server binaries of that version.
pg_bindir() {
  local major
  major=$(pg_major) || return 1
  [ -x "$(pg_root)/$major/bin/postgres" ] || { echo "$(pg_root)/$major/bin/postgres is missing" >&2; return 1; }
  echo "$(pg_root)/$major/bin"
}

# Debian's postgresql-hll package built for that version.
pg_hll_package() {
  local major
  major=$(pg_major) || return 1
  echo "postgresql-$major-hll"
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# Runs a command as the postgres user (PostgreSQL refuses to run as root).
as_postgres() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

pg_start() {
  local bindir
  bindir=$(pg_bindir) || return 1
  BACKBEAT_PG_DIR=$(mktemp -d /tmp/backbeat-pg.XXXXXX)
  chmod 755 "$BACKBEAT_PG_DIR"
  [ "$(id -u)" = 0 ] && chown postgres:postgres "$BACKBEAT_PG_DIR"
  BACKBEAT_PG_PORT=${BACKBEAT_PG_PORT:-$(free_port)}
  as_postgres "$bindir/initdb" -D "$BACKBEAT_PG_DIR/data" -U postgres -A trust --no-sync >"$BACKBEAT_PG_DIR/initdb.log" 2>&1 \
    || { cat "$BACKBEAT_PG_DIR/initdb.log" >&2; return 1; }
  as_postgres "$bindir/pg_ctl" -D "$BACKBEAT_PG_DIR/data" -l "$BACKBEAT_PG_DIR/server.log" -w \
    -o "-p $BACKBEAT_PG_PORT -k $BACKBEAT_PG_DIR -c listen_addresses=127.0.0.1 -c fsync=${BACKBEAT_PG_FSYNC:-off} -c max_connections=200" start >/dev/null \
    || { cat "$BACKBEAT_PG_DIR/server.log" >&2; return 1; }
  as_postgres "$bindir/createdb" -h 127.0.0.1 -p "$BACKBEAT_PG_PORT" -U postgres backbeat
  BACKBEAT_POSTGRES_URL="postgres://postgres@127.0.0.1:$BACKBEAT_PG_PORT/backbeat"
  export BACKBEAT_PG_DIR BACKBEAT_PG_PORT BACKBEAT_POSTGRES_URL
  echo "PostgreSQL running on port $BACKBEAT_PG_PORT (data in $BACKBEAT_PG_DIR)"
}

pg_stop() {
  [ -n "${BACKBEAT_PG_DIR:-}" ] && [ -d "$BACKBEAT_PG_DIR/data" ] || return 0
  as_postgres "$(pg_bindir)/pg_ctl" -D "$BACKBEAT_PG_DIR/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$BACKBEAT_PG_DIR"
}

# CPU seconds the running PostgreSQL has used so far: the server process's own and those of its exited backends
# (added to it when it reaps them), plus those of its live processes. Take the difference of two readings.
pg_cpu_seconds() {
  python3 - "$BACKBEAT_PG_DIR/data/postmaster.pid" <<'PY'
import os, sys
server = int(open(sys.argv[1]).readline())
def stat(pid):
    text = open(f"/proc/{pid}/stat").read()
    return text[text.rindex(")") + 2:].split()  # from field 3 (state) on: ppid at 1, utime..cstime at 11..14
ticks = sum(int(x) for x in stat(server)[11:15])
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        fields = stat(pid)
    except OSError:
        continue
    if int(fields[1]) == server:
        ticks += int(fields[11]) + int(fields[12])
print(ticks / os.sysconf("SC_CLK_TCK"))
PY
}
