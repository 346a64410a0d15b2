#!/usr/bin/env python3
"""The churn measurement of scripts/bench: three `serve` instances in one group consume one topic while events are
published at a steady rate, and every 20 s one instance is SIGKILLed or stopped with SIGTERM (in turn) and started
again under its name. Measures the longest stretch any partition had no owner (from the instances' "partitions
assigned/revoked/lost" log lines), the most the stored offsets trailed what was consumed
(`backbeat_stored_offset_trail_seconds`, sampled every second on every live instance), what was published against
what ended durable, and the gaps recorded. Prints one JSON object.

usage: churn.py BIN BROKERS POSTGRES_URL TOKEN WORKDIR TOPIC RATE SECONDS START_DAY"""
import datetime, json, os, re, signal, socket, subprocess, sys, time, urllib.request

binary, brokers, url, token, work, topic, rate, seconds, start_day = sys.argv[1:]
rate, seconds = int(rate), int(seconds)
every = 20


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def psql(sql):
    return subprocess.check_output(["psql", url, "-qAtc", sql], text=True).strip()


ports = [free_port() for _ in range(3)]
logs = [[] for _ in range(3)]   # per slot: (path, end time or None)
procs = [None] * 3


def start(slot):
    path = f"{work}/churn-{slot}-{len(logs[slot])}.log"
    log = open(path, "w")
    procs[slot] = subprocess.Popen([
        binary, "serve", "--brokers", brokers, "--postgres-url", url, "--admin-token", token,
        "--http-port", str(ports[slot]), "--advertise-url", f"http://127.0.0.1:{ports[slot]}", "--topics", topic,
        "--group", "bench-churn", "--group-instance-id", f"churn-{slot}", "--log-level", "info"], stdout=log, stderr=log)
    logs[slot].append([path, None])


def trail_seconds(slot):
    try:
        text = urllib.request.urlopen(f"http://127.0.0.1:{ports[slot]}/metrics", timeout=1).read().decode()
    except Exception:
        return None
    found = re.search(r"^backbeat_stored_offset_trail_seconds(?:\{[^}]*\})? ([0-9.e+-]+)$", text, re.M)
    return float(found.group(1)) if found else None


events = rate * seconds
lines = subprocess.check_output([binary, "generate", "--events", str(events), "--seed", "5", "--artists", "200", "--days", "35",
                                 "--start", start_day, "--out", "-"], stderr=subprocess.DEVNULL).splitlines(keepends=True)
published = len(lines)
for slot in range(3):
    start(slot)
time.sleep(8)  # every instance joined and took partitions
producer = subprocess.Popen(["kcat", "-b", brokers, "-P", "-t", topic, "-q"], stdin=subprocess.PIPE)
began = time.time()
tick, per_tick, sent, changes, trail, next_change, turn = 0.1, max(1, rate // 10), 0, [], 0.0, began + every, 0
while sent < published:
    producer.stdin.write(b"".join(lines[sent:sent + per_tick]))
    producer.stdin.flush()
    sent += per_tick
    now = time.time()
    if now >= next_change and now < began + seconds - every / 2:
        slot = turn % 3
        crash = turn % 2 == 0
        procs[slot].send_signal(signal.SIGKILL if crash else signal.SIGTERM)
        procs[slot].wait(timeout=60)
        logs[slot][-1][1] = time.time()
        changes.append(f"{'kill' if crash else 'stop'} churn-{slot}")
        start(slot)
        turn += 1
        next_change += every
    if int(now) != int(now - tick):
        for slot in range(3):
            value = trail_seconds(slot)
            if value is not None:
                trail = max(trail, value)
    time.sleep(max(0.0, began + (sent // per_tick) * tick - time.time()))
producer.stdin.close()
acknowledged = producer.wait(timeout=120) == 0
published_seconds = time.time() - began
deadline = time.time() + 300
while time.time() < deadline:
    if int(psql(f"SELECT coalesce(sum(next_offset), 0) FROM kafka_offsets WHERE topic = '{topic}'")) >= published:
        break
    for slot in range(3):
        value = trail_seconds(slot)
        if value is not None:
            trail = max(trail, value)
    time.sleep(1)
drained = time.time() - began - published_seconds
stored = int(psql(f"SELECT coalesce(sum(next_offset), 0) FROM kafka_offsets WHERE topic = '{topic}'"))
gap_rows = int(psql(f"SELECT count(*) FROM offset_gaps WHERE topic = '{topic}'"))
gap_messages = int(psql(f"SELECT coalesce(sum(last_missing - first_missing + 1), 0) FROM offset_gaps WHERE topic = '{topic}'"))
finished = time.time()
for slot in range(3):
    procs[slot].send_signal(signal.SIGTERM)
    procs[slot].wait(timeout=60)

# The longest stretch, from the first change to the end of production, in which a partition had no owner.
pattern = re.compile(r"^(\S+) \S+ \S+ partitions=(\S+) \[BackbeatKafka\] partitions (assigned|revoked|lost)$")
owned = {}
for slot in range(3):
    for path, ended in logs[slot]:
        since = {}
        for line in open(path, errors="replace"):
            match = pattern.match(line.rstrip("\n"))
            if not match:
                continue
            moment = datetime.datetime.strptime(match.group(1), "%Y-%m-%dT%H:%M:%S%z").timestamp()
            for partition in match.group(2).split(","):
                if match.group(3) == "assigned":
                    since.setdefault(partition, moment)
                elif partition in since:
                    owned.setdefault(partition, []).append((since.pop(partition), moment))
        for partition, moment in since.items():
            owned.setdefault(partition, []).append((moment, ended or finished))
window = (began, began + published_seconds)
longest, worst = 0.0, None
for partition, intervals in owned.items():
    cursor = window[0]
    for start_at, end_at in sorted(intervals):
        if start_at - cursor > longest:
            longest, worst = start_at - cursor, partition
        cursor = max(cursor, end_at)
    if window[1] - cursor > longest:
        longest, worst = window[1] - cursor, partition
# The longest wait the instances reported for a partition's first message after an assignment.
waited = re.compile(r"partition=(\S+) waited_seconds=(\S+) \[BackbeatServer\] partition consumed again$")
resume_wait, resume_partition = 0.0, None
for slot in range(3):
    for path, _ in logs[slot]:
        for line in open(path, errors="replace"):
            match = waited.search(line.rstrip("\n"))
            if match and float(match.group(2)) > resume_wait:
                resume_wait, resume_partition = float(match.group(2)), match.group(1)
print(json.dumps({
    "events_per_second": rate, "seconds": seconds, "published": published, "acknowledged": acknowledged,
    "stored": stored, "not_durable": published - stored, "gap_rows": gap_rows, "gap_messages": gap_messages,
    "changes": changes, "longest_unowned_seconds": round(longest, 1), "longest_unowned_partition": worst,
    "longest_resume_wait_seconds": round(resume_wait, 1), "longest_resume_wait_partition": resume_partition,
    "max_stored_offset_trail_seconds": round(trail, 2), "drain_seconds_after_production": round(drained, 1),
}))
