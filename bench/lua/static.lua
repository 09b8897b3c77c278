-- The reference: nginx serving a static file the size of a typical customization document.
package.path = os.getenv("BENCH_LUA") .. "/?.lua;" .. package.path
local common = require("common")
done = common.done
