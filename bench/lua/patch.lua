-- PATCH random valid operations (durable writes) for many distinct users; BENCH_READ_PERCENT mixes in GETs.
package.path = os.getenv("BENCH_LUA") .. "/?.lua;" .. package.path
local common = require("common")
local users, prefix, read_percent, idempotent
local sent = 0
local bodies = {
  '{"operations":[{"op":"setSidebarVisibility","tab":"com.myApp.bell","visibility":"hidden"}]}',
  '{"operations":[{"op":"setSidebarVisibility","tab":"com.myApp.bell","visibility":"automatic"}]}',
  '{"operations":[{"op":"setTabBarVisibility","tab":"com.myApp.bell","visibility":"hidden"}]}',
  '{"operations":[{"op":"setTabBarVisibility","tab":"com.myApp.bell","visibility":"visible"}]}',
  '{"operations":[{"op":"moveTab","section":"com.myApp.categories","tab":"com.myApp.lights","toIndex":0}]}',
  '{"operations":[{"op":"moveTab","section":"com.myApp.categories","tab":"com.myApp.climate","toIndex":0}]}',
  '{"operations":[{"op":"setSectionExpanded","section":"com.myApp.categories","expanded":false}]}',
  '{"operations":[{"op":"setSectionExpanded","section":"com.myApp.categories","expanded":true}]}',
  '{"operations":[{"op":"resetVisibility","placement":"all"},{"op":"resetSectionOrder"}]}',
}

function init(args)
  users, prefix = common.init()
  read_percent = tonumber(os.getenv("BENCH_READ_PERCENT") or "0")
  -- BENCH_IDEMPOTENCY=1: every PATCH carries its own Idempotency-Key (stored with the change, like a device's).
  idempotent = os.getenv("BENCH_IDEMPOTENCY") == "1"
end

function request()
  local u = users[math.random(#users)]
  if math.random(100) <= read_percent then
    return wrk.format("GET", prefix .. u[1] .. "/customization", { ["Authorization"] = u[2] })
  end
  local headers = { ["Authorization"] = u[2], ["Content-Type"] = "application/json" }
  if idempotent then
    sent = sent + 1
    headers["Idempotency-Key"] = string.format("%08x-%08x-%d", math.random(0, 0x7fffffff), math.random(0, 0x7fffffff), sent)
  end
  return wrk.format("PATCH", prefix .. u[1] .. "/customization", headers, bodies[math.random(#bodies)])
end

done = common.done
