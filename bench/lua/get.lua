-- GET customization for many distinct users, each with its own JWT.
package.path = os.getenv("BENCH_LUA") .. "/?.lua;" .. package.path
local common = require("common")
local users, prefix

function init(args)
  users, prefix = common.init()
end

function request()
  local u = users[math.random(#users)]
  return wrk.format("GET", prefix .. u[1] .. "/customization", { ["Authorization"] = u[2] })
end

done = common.done
