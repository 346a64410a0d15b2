#!/usr/bin/env python3
"""scripts/bench's dashboard reads: every dashboard endpoint and the HTTP floor (/healthz) of two running serves,
one answering from memory and one with --memory-days 0 (PostgreSQL alone), requests spread over many artists and
ranges ending on the last days. For each endpoint, in each of three runs (the two serves alternated): closed-loop
(wrk, 64 connections) for p50/p99/p99.9 and throughput, then open-loop (backbeat-load) at half of that throughput for
p99.9 with waiting counted. Each endpoint's p99 over the floor's p99 of the same run and serve; the report gives the
median of the three ratios and their range, and the answer cache's hit rate over the whole step (per endpoint too:
`memory_serve_lookups` of each closed-loop run, with what answers from memory read of PostgreSQL, kept or read). Every request says
`Accept-Encoding: gzip, deflate, br, zstd`, as Chromium's since version 123 do: large kept answers come as zstd.

usage: read_bench.py --memory-port P --postgres-port P --token T --load BIN --lua FILE --today YYYY-MM-DD --out FILE
       [--artists 120] [--seconds 5] [--runs 3] [--connections 64]"""
import argparse, datetime, json, os, re, statistics, subprocess, sys, tempfile, urllib.request

ap = argparse.ArgumentParser()
ap.add_argument("--memory-port", type=int, required=True)
ap.add_argument("--postgres-port", type=int, required=True)
ap.add_argument("--token", required=True)
ap.add_argument("--load", required=True)
ap.add_argument("--lua", required=True)
ap.add_argument("--today", required=True)
ap.add_argument("--out", required=True)
ap.add_argument("--artists", type=int, default=120)
ap.add_argument("--seconds", type=int, default=5)
ap.add_argument("--runs", type=int, default=3)
ap.add_argument("--connections", type=int, default=64)
args = ap.parse_args()

# What Chromium asks for since version 123 (the dashboard's readers are browsers).
ACCEPT_ENCODING = "gzip, deflate, br, zstd"
today = datetime.date.fromisoformat(args.today)
day = lambda offset: (today - datetime.timedelta(days=offset)).isoformat()
artists = [f"artist-{n:04d}" for n in range(1, args.artists + 1)]
ends = range(0, 7)  # ranges ending today and on each of the six days before


def paths(template):
    return [template(f"/v1/artists/{a}", e) for a in artists for e in ends]


ENDPOINTS = {
    "healthz": ["/healthz"],
    "streams_28d": paths(lambda b, e: f"{b}/streams?from={day(e + 28)}&to={day(e)}&granularity=day"),
    "streams_12_months": paths(lambda b, e: f"{b}/streams?from={day(e + 365)}&to={day(e)}&granularity=month"),
    "platforms": paths(lambda b, e: f"{b}/platforms?from={day(e + 28)}&to={day(e)}"),
    "demographics": paths(lambda b, e: f"{b}/demographics?from={day(e + 28)}&to={day(e)}"),
    "top_tracks": paths(lambda b, e: f"{b}/tracks/top?from={day(e + 28)}&to={day(e)}&limit=10"),
    "summary": paths(lambda b, e: f"{b}/summary?as_of={day(e)}"),
    "revenue_12_months": paths(lambda b, e: f"{b}/revenue?from={day(e + 365)}&to={day(e)}&granularity=month"),
    "social_28d": paths(lambda b, e: f"{b}/social?from={day(e + 28)}&to={day(e)}&granularity=day"),
    "page_28d": paths(lambda b, e: f"{b}/page?from={day(e + 28)}&to={day(e)}&granularity=day"),
    "page_sections": paths(lambda b, e: f"{b}/page/sections?from={day(e + 28)}&to={day(e)}&limit=10"),
    "page_sources": paths(lambda b, e: f"{b}/page/sources?from={day(e + 28)}&to={day(e)}&limit=10"),
    "page_funnel_28d": paths(lambda b, e: f"{b}/page/funnel?from={day(e + 28)}&to={day(e)}&granularity=day"),
}
work = tempfile.mkdtemp(prefix="read-bench.")
files = {}
for name, lines in ENDPOINTS.items():
    files[name] = os.path.join(work, f"{name}.txt")
    with open(files[name], "w") as f:
        f.write("\n".join(lines) + "\n")


def closed(port, name):
    out = subprocess.run(
        ["wrk", "-t2", f"-c{args.connections}", f"-d{args.seconds}s", "--latency", "-H", f"Authorization: Bearer {args.token}",
         "-H", f"Accept-Encoding: {ACCEPT_ENCODING}", "-s", args.lua, f"http://127.0.0.1:{port}", "--", files[name]],
        capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def opened(port, name, rate):
    out = subprocess.run(
        [args.load, "--port", str(port), "--rate", f"{rate:.0f}", "--seconds", str(args.seconds),
         "--connections", str(args.connections), "--paths", files[name], "--token", args.token, "--accept-encoding", ACCEPT_ENCODING],
        capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def cache_counts(port):
    """The answer cache's lookups by outcome, and what answers from memory read of PostgreSQL found kept or read
    (`stored_hit`, `stored_miss`)."""
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics").read().decode()
    counts = {}
    for name, metric, outcome in [("hit", "answer_cache", "hit"), ("shared", "answer_cache", "shared"), ("miss", "answer_cache", "miss"),
                                  ("stored_hit", "stored_part", "hit"), ("stored_miss", "stored_part", "miss")]:
        m = re.search(rf'backbeat_{metric}_lookups_total{{outcome="{outcome}"}} (\d+)', text)
        counts[name] = int(m.group(1)) if m else 0
    return counts


def delta(after, before):
    return {k: after[k] - before[k] for k in after}


modes = {"memory": args.memory_port, "postgres_only": args.postgres_port}
before = cache_counts(args.memory_port)
runs = []
for run in range(args.runs):
    order = list(modes) if run % 2 == 0 else list(reversed(modes))
    result = {}
    for mode in order:
        port = modes[mode]
        result[mode] = {}
        for name in ENDPOINTS:
            counted = cache_counts(args.memory_port)
            c = closed(port, name)
            c["memory_serve_lookups"] = delta(cache_counts(args.memory_port), counted)
            o = opened(port, name, max(1.0, c["rps"] / 2))
            result[mode][name] = {"closed": c, "open_half_rate": o}
            print(f"run {run + 1} {mode:13s} {name:18s} closed p50 {c['p50_ms']:7.2f} p99 {c['p99_ms']:7.2f} p99.9 {c['p999_ms']:7.2f} ms "
                  f"{c['rps']:8.0f}/s errors {c['errors']}; open at {o['rate']:.0f}/s p99.9 {o['p999_ms']:.2f} ms non-200 {o['non_200']}",
                  file=sys.stderr, flush=True)
    runs.append(result)
lookups = delta(cache_counts(args.memory_port), before)
total = lookups["hit"] + lookups["shared"] + lookups["miss"]
stored_total = lookups["stored_hit"] + lookups["stored_miss"]

summary = {}
for mode in modes:
    summary[mode] = {}
    for name in ENDPOINTS:
        ratios = [r[mode][name]["closed"]["p99_ms"] / r[mode]["healthz"]["closed"]["p99_ms"] for r in runs]
        med = lambda f: statistics.median(f(r[mode][name]) for r in runs)
        summary[mode][name] = {
            "p50_ms": med(lambda x: x["closed"]["p50_ms"]), "p99_ms": med(lambda x: x["closed"]["p99_ms"]),
            "p999_ms": med(lambda x: x["closed"]["p999_ms"]), "rps": med(lambda x: x["closed"]["rps"]),
            "errors": sum(r[mode][name]["closed"]["errors"] + r[mode][name]["open_half_rate"]["non_200"] for r in runs),
            "open_rate": med(lambda x: x["open_half_rate"]["rate"]), "open_p99_ms": med(lambda x: x["open_half_rate"]["p99_ms"]),
            "open_p999_ms": med(lambda x: x["open_half_rate"]["p999_ms"]),
            "p99_over_floor": {"median": statistics.median(ratios), "min": min(ratios), "max": max(ratios)},
        }
limits = {"memory": 2.0, "postgres_only": 5.0}
targets = {mode: {name: {"p99_within": summary[mode][name]["p99_over_floor"]["median"] <= limits[mode],
                          "open_p999_under_10ms": summary[mode][name]["open_p999_ms"] < 10.0}
                   for name in ENDPOINTS if name != "healthz"} for mode in modes}
report = {"artists": len(artists), "ranges_per_artist": len(ends), "seconds": args.seconds, "connections": args.connections,
          "runs": runs, "summary": summary, "targets": targets, "limits": limits,
          "answer_cache": {"lookups": lookups, "hit_rate": (lookups["hit"] + lookups["shared"]) / total if total else None,
                           "stored_part_hit_rate": lookups["stored_hit"] / stored_total if stored_total else None}}
json.dump(report, open(args.out, "w"), indent=2, sort_keys=True)

# The same, as a table on standard output: each endpoint from memory and from PostgreSQL alone.
print("| endpoint | from memory: p50 / p99 / p99.9, closed-loop rate | p99 / floor p99 | open-loop p99.9 "
      "| PostgreSQL alone: p50 / p99 / p99.9, closed-loop rate | p99 / floor p99 | open-loop p99.9 |")
print("|---|---|---|---|---|---|---|")
for name in ENDPOINTS:
    cells = []
    for mode in modes:
        e = summary[mode][name]
        ratio = e["p99_over_floor"]
        cells += [f"{e['p50_ms']:.2f} / {e['p99_ms']:.2f} / {e['p999_ms']:.2f} ms, {e['rps']:,.0f}/s",
                  f"{ratio['median']:.2f} ({ratio['min']:.2f}-{ratio['max']:.2f})",
                  f"{e['open_rate']:,.0f}/s: {e['open_p999_ms']:.2f} ms"]
    print(f"| {name.replace('_', ' ')} | " + " | ".join(cells) + " |")
hit_rate = report["answer_cache"]["hit_rate"]
print(f"\nAnswer cache of the memory serve: hit rate {hit_rate:.3f} ({lookups['hit']:,} hits, {lookups['shared']:,} shared, "
      f"{lookups['miss']:,} misses)." if hit_rate is not None else "\nAnswer cache of the memory serve: no lookups.")
stored_rate = report["answer_cache"]["stored_part_hit_rate"]
if stored_rate is not None:
    print(f"What its answers read of PostgreSQL (the days before memory's horizon): found kept {stored_rate:.3f} "
          f"({lookups['stored_hit']:,} kept, {lookups['stored_miss']:,} read).")

