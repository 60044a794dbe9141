-- LDAP sign-ins through the flow API, two requests each: POST /v1/flows starts a flow, POST
-- /v1/flows/{id} answers it with a directory user's password (load01..load50 in turn). Flows whose
-- challenge came back wait in a per-thread queue for the next free connection.
local pending = {}
local user = 0
completed = 0
local threads = {}

setup = function(thread)
  table.insert(threads, thread)
end

request = function()
  local flow = table.remove(pending)
  if flow then
    user = user % 50 + 1
    local name = string.format("load%02d", user)
    return wrk.format("POST", "/v1/flows/" .. flow, {["Content-Type"] = "application/json"},
      string.format('{"answer":{"username":"%s","password":"load-password-%02d"}}', name, user))
  end
  return wrk.format("POST", "/v1/flows", {["Content-Type"] = "application/json"}, '{"app":"bench","provider":"corp-ldap"}')
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
