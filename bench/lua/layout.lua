-- GET the resolved layout (both size classes) for many distinct users.
package.path = os.getenv("BENCH_LUA") .. "/?.lua;" .. package.path
local common = require("common")
local users, prefix
local classes = { "compact", "regular" }

function init(args)
  users, prefix = common.init()
end

function request()
  local u = users[math.random(#users)]
  return wrk.format("GET", prefix .. u[1] .. "/layout?sizeClass=" .. classes[math.random(2)], { ["Authorization"] = u[2] })
end

done = common.done
