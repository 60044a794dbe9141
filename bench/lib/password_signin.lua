-- Password sign-ins through the flow API, two requests each: POST /v1/flows starts a flow for the
-- `local` provider, POST /v1/flows/{id} answers it with the password of bench01..bench64 in turn
-- (one account signing in 32 times at once would trip its own lockout: attempts are reserved before
-- they are checked). Flows whose challenge came back wait in a per-thread queue for the next free
-- connection.
local pending = {}
local user = 0
completed = 0
local threads = {}

setup = function(thread)
  table.insert(threads, thread)
end

request = function()
  local headers = {["Content-Type"] = "application/json", ["Authorization"] = "Basic " .. os.getenv("BENCH_AUTH")}
  local flow = table.remove(pending)
  if flow then
    user = user % 64 + 1
    return wrk.format("POST", "/v1/flows/" .. flow, headers, string.format('{"answer":{"username":"bench%02d","password":"bench password 42"}}', user))
  end
  return wrk.format("POST", "/v1/flows", headers, '{"app":"bench","provider":"local"}')
end

response = function(status, headers, body)
  local flow = body:match('"flow"%s*:%s*"([^"]+)"')
  if status == 200 and body:find('"access_token"', 1, true) then
    completed = completed + 1
  elseif flow and body:find('"challenge"', 1, true) then
    table.insert(pending, flow)
  end
end

local report_requests = dofile(os.getenv("BENCH_LIB") .. "/report.lua") or done
done = function(summary, latency, requests)
  local signins = 0
  for _, thread in ipairs(threads) do signins = signins + (thread:get("completed") or 0) end
  io.write(string.format("SIGNINS completed=%d per_second=%.0f\n", signins, signins / (summary.duration / 1e6)))
  report_requests(summary, latency, requests)
end
