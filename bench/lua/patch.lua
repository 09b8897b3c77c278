-- PATCH (durable writes) for many distinct users; BENCH_READ_PERCENT mixes in GETs.
-- Every PATCH changes the stored state, whatever the user's document is and whatever order concurrent
-- requests arrive in: one of the layout operations below (which may or may not change anything on its
-- own) followed by a setDynamicTabs whose title no earlier request used. A PATCH that changes nothing
-- costs no write (no commit, no fsync) and would inflate the row; bench/run checks committed writes
-- against requests with the server's /metrics.
package.path = os.getenv("BENCH_LUA") .. "/?.lua;" .. package.path
local common = require("common")
local users, prefix, read_percent, idempotent, tag
local sent = 0
local operations = {
  '{"op":"setSidebarVisibility","tab":"com.myApp.bell","visibility":"hidden"}',
  '{"op":"setSidebarVisibility","tab":"com.myApp.bell","visibility":"automatic"}',
  '{"op":"setTabBarVisibility","tab":"com.myApp.bell","visibility":"hidden"}',
  '{"op":"setTabBarVisibility","tab":"com.myApp.bell","visibility":"visible"}',
  '{"op":"moveTab","section":"com.myApp.categories","tab":"com.myApp.lights","toIndex":0}',
  '{"op":"moveTab","section":"com.myApp.categories","tab":"com.myApp.climate","toIndex":0}',
  '{"op":"setSectionExpanded","section":"com.myApp.categories","expanded":false}',
  '{"op":"setSectionExpanded","section":"com.myApp.categories","expanded":true}',
  '{"op":"resetVisibility","placement":"all"},{"op":"resetSectionOrder"}',
}
-- The title makes the change: unique per thread (tag) and request (sent); the list keeps its size.
local dynamic = '{"op":"setDynamicTabs","section":"com.myApp.playlists","tabs":[' ..
  '{"id":"com.myApp.playlist.running","title":"Run %s-%d","systemImage":"figure.run"},' ..
  '{"id":"com.myApp.playlist.all","title":"All","systemImage":"music.note.list"}]}'

function init(args)
  users, prefix = common.init()
  read_percent = tonumber(os.getenv("BENCH_READ_PERCENT") or "0")
  -- BENCH_IDEMPOTENCY=1: every PATCH carries its own Idempotency-Key (stored with the change, like a device's).
  idempotent = os.getenv("BENCH_IDEMPOTENCY") == "1"
  tag = string.format("%x%x", os.time(), math.random(0, 0x7fffffff))
end

function request()
  local u = users[math.random(#users)]
  if math.random(100) <= read_percent then
    return wrk.format("GET", prefix .. u[1] .. "/customization", { ["Authorization"] = u[2] })
  end
  sent = sent + 1
  local headers = { ["Authorization"] = u[2], ["Content-Type"] = "application/json" }
  if idempotent then
    headers["Idempotency-Key"] = string.format("%s-%d", tag, sent)
  end
  local body = '{"operations":[' .. operations[math.random(#operations)] .. ',' .. string.format(dynamic, tag, sent) .. ']}'
  return wrk.format("PATCH", prefix .. u[1] .. "/customization", headers, body)
end

done = common.done
