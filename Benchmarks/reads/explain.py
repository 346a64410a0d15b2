#!/usr/bin/env python3
"""EXPLAIN (ANALYZE, BUFFERS) of every statement each dashboard endpoint sends to PostgreSQL, as docs/performance.md
shows them: asks a running serve (best with --memory-days 0 --answer-cache 0, so that every read reaches PostgreSQL)
each endpoint once while PostgreSQL logs the statements of the serve's database (log_min_duration_statement = 0 for
that database, undone at the end), then runs each logged statement again, its parameters in place, under EXPLAIN.
Prints per endpoint: each statement's plan (node, relation, rows, buffers), its planning and execution time.

usage: explain.py --url POSTGRES_URL --log SERVER_LOG --port SERVE_PORT --token TOKEN --artist ID --today YYYY-MM-DD"""
import argparse, datetime, re, subprocess, time, urllib.request

ap = argparse.ArgumentParser()
for flag in ["--url", "--log", "--token", "--artist", "--today"]:
    ap.add_argument(flag, required=True)
ap.add_argument("--port", type=int, required=True)
args = ap.parse_args()

today = datetime.date.fromisoformat(args.today)
day = lambda offset: (today - datetime.timedelta(days=offset)).isoformat()
ENDPOINTS = {
    "streams 28d": f"streams?from={day(28)}&to={day(0)}&granularity=day",
    "streams 12 months": f"streams?from={day(365)}&to={day(0)}&granularity=month",
    "platforms": f"platforms?from={day(28)}&to={day(0)}",
    "demographics": f"demographics?from={day(28)}&to={day(0)}",
    "top tracks": f"tracks/top?from={day(28)}&to={day(0)}&limit=10",
    "summary": f"summary?as_of={day(0)}",
    "revenue 12 months": f"revenue?from={day(365)}&to={day(0)}&granularity=month",
    "social 28d": f"social?from={day(28)}&to={day(0)}&granularity=day",
}


def psql(*sql):
    """Runs each of `sql` in turn in one session; answers what they print."""
    command = ["psql", args.url, "-X", "-At"]
    for statement in sql:
        command += ["-c", statement]
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout


def statements(text):
    """(sql, parameters) of each `execute <unnamed>` the log holds, in order."""
    found = []
    entries = re.split(r"\n(?=\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+ UTC \[\d+\] )", text)
    for index, entry in enumerate(entries):
        m = re.search(r"LOG:  duration: [\d.]+ ms  execute <unnamed>: (.*)", entry, re.S)
        if not m:
            continue
        sql = m.group(1).strip()
        params = {}
        if index + 1 < len(entries) and "DETAIL:  parameters:" in entries[index + 1]:
            for name, value in re.findall(r"\$(\d+) = (NULL|'(?:[^']|'')*')", entries[index + 1]):
                params[int(name)] = value
        found.append((sql, params))
    return found


def inline(sql, params):
    for name in sorted(params, reverse=True):
        sql = sql.replace(f"${name}", params[name])
    return sql


database = args.url.rsplit("/", 1)[1]
psql(f"ALTER DATABASE {database} SET log_min_duration_statement = 0")
try:
    time.sleep(2)  # the serve's pool opens new sessions only as it needs: ask once first, so the setting is in force
    for name, path in ENDPOINTS.items():
        urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{args.port}/v1/artists/{args.artist}/{path}",
                                                      headers={"Authorization": f"Bearer {args.token}"})).read()
    time.sleep(0.5)
    for name, path in ENDPOINTS.items():
        start = open(args.log).seek(0, 2)
        urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{args.port}/v1/artists/{args.artist}/{path}",
                                                      headers={"Authorization": f"Bearer {args.token}"})).read()
        time.sleep(0.5)
        with open(args.log) as log:
            log.seek(start)
            # The reads' statements only (not the snapshot's BEGIN and COMMIT, nor what the serve's other tasks send).
            logged = [s for s in statements(log.read()) if re.search(r"_days\b|_months\b", s[0])]
        print(f"### {name}: `{path}`, {len(logged)} statement{'' if len(logged) == 1 else 's'}\n")
        for sql, params in logged:
            # Run twice before, in the same session: the plan and times below are of a session that has read the
            # catalogs already, as the serve's pooled connections have.
            statement = inline(sql, params)
            plan = psql(statement, statement, "EXPLAIN (ANALYZE, BUFFERS) " + statement)
            plan = plan[plan.index("QUERY PLAN") if "QUERY PLAN" in plan else 0:]
            plan = "\n".join(line for line in plan.splitlines() if re.search(r"\(actual time|Buffers:|Planning|Execution", line))
            print("```")
            print(re.sub(r"\s+", " ", inline(sql, params))[:300] + " ...")
            buffers = [line.strip() for line in plan.splitlines() if line.strip().startswith("Buffers:")]
            for line in plan.splitlines():
                if re.search(r"(Scan|Append|Aggregate|Sort |Result)", line):
                    line = re.sub(r"\(cost=[^)]*\) ", "", line.rstrip())
                    print(re.sub(r" on (\w+) \w+_\d+ ", r" on \1 ", line))
            print(f"{buffers[0]} (execution); planning: {buffers[-1]}" if len(buffers) >= 2 else "")
            for line in plan.splitlines():
                if re.search(r"(Planning Time|Execution Time)", line):
                    print(line.strip())
            print("```\n")
finally:
    psql(f"ALTER DATABASE {database} RESET log_min_duration_statement")
