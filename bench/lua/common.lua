-- Shared by the scenarios: load "userId token" pairs (one JWT per distinct user) and report as one JSON line.
local common = {}

function common.load_users()
  local users = {}
  for line in io.lines(os.getenv("BENCH_TOKENS")) do
    local user, token = line:match("^(%S+) (%S+)$")
    if user then users[#users + 1] = { user, "Bearer " .. token } end
  end
  return users
end

-- The per-thread setup every scenario shares: users with tokens, the path prefix, a random stream.
function common.init()
  common.seed()
  return common.load_users(), os.getenv("BENCH_PREFIX")
end

function common.seed()
  -- each wrk thread gets its own random stream
  math.randomseed(os.time() + tonumber(tostring({}):match("0x(%x+)") or "0", 16) % 100000)
end

function common.done(summary, latency, requests)
  local errors = summary.errors
  io.write(string.format(
    'BENCH {"requests":%d,"seconds":%.3f,"rps":%.1f,"p50ms":%.3f,"p99ms":%.3f,"status_errors":%d,"socket_errors":%d}\n',
    summary.requests, summary.duration / 1e6, summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    errors.status, errors.connect + errors.read + errors.write + errors.timeout))
end

return common
