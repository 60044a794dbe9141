-- Refresh grants: every refresh token is single use, so each response's new refresh token is queued
-- for the next request of the same thread. The initial pool comes from BENCH_TOKENS (a file, one
-- token per line); each thread takes its own slice.
local tokens = {}
local counter = 0

setup = function(thread)
  counter = counter + 1
  thread:set("index", counter)
end

init = function(args)
  local all = {}
  for line in io.lines(os.getenv("BENCH_TOKENS")) do all[#all + 1] = line end
  local threads = tonumber(os.getenv("BENCH_THREADS"))
  for i = index, #all, threads do tokens[#tokens + 1] = all[i] end
end

request = function()
  local token = table.remove(tokens, 1)
  if token == nil then token = "exhausted" end
  return wrk.format("POST", "/oauth2/token", {
    ["Content-Type"] = "application/x-www-form-urlencoded",
    ["Authorization"] = "Basic " .. os.getenv("BENCH_AUTH"),
  }, "grant_type=refresh_token&refresh_token=" .. token)
end

response = function(status, headers, body)
  local token = string.match(body, '"refresh_token":"([^"]+)"')
  if token then tokens[#tokens + 1] = token end
end

dofile(os.getenv("BENCH_LIB") .. "/report.lua")
