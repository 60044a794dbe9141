-- JWT bearer grants: each assertion is single use (jti), so every request takes the next one from
-- BENCH_TOKENS (one per line); each wrk thread walks its own slice.
local tokens = {}
local counter = 0
local position = 0

setup = function(thread)
  counter = counter + 1
  thread:set("index", counter)
end

init = function(args)
  local threads = tonumber(os.getenv("BENCH_THREADS"))
  local line_number = 0
  for line in io.lines(os.getenv("BENCH_TOKENS")) do
    line_number = line_number + 1
    if (line_number - index) % threads == 0 then tokens[#tokens + 1] = line end
  end
end

request = function()
  position = position + 1
  local token = tokens[position] or "exhausted"
  return wrk.format("POST", "/oauth2/token", {["Content-Type"] = "application/x-www-form-urlencoded"},
    "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&client_id=" .. (os.getenv("BENCH_CLIENT") or "bench") .. "&assertion=" .. token)
end

dofile(os.getenv("BENCH_LIB") .. "/report.lua")
