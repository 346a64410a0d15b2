-- wrk script for scripts/bench's dashboard reads: each request takes a path drawn at random from the file named by
-- the first script argument (one per line), and the run ends by printing its latency percentiles as JSON.
local paths = {}

function init(args)
  for line in io.lines(args[1]) do
    if line ~= "" then paths[#paths + 1] = line end
  end
  math.randomseed(tonumber(args[2] or "1") + os.time())
end

function request()
  return wrk.format("GET", paths[math.random(#paths)])
end

function done(summary, latency, requests)
  local seconds = summary.duration / 1e6
  local bad = summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout
  io.write(string.format(
    '{"requests": %d, "rps": %.1f, "errors": %d, "p50_ms": %.3f, "p99_ms": %.3f, "p999_ms": %.3f, "max_ms": %.3f}\n',
    summary.requests, summary.requests / seconds, bad,
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency:percentile(99.9) / 1000, latency.max / 1000))
end
