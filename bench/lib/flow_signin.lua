-- Sign-ins through the flow API, two requests each: POST /v1/flows starts a flow of BENCH_APP with
-- BENCH_PROVIDER, POST /v1/flows/{id} answers it with the username and password of user 1..BENCH_USERS
-- in turn (string.format of BENCH_USER_FORMAT and BENCH_PASSWORD_FORMAT with the user's number:
-- one account signing in many times at once would trip its own lockout, as attempts are reserved
-- before they are checked). BENCH_AUTH, when set, is sent as Basic client credentials. Flows whose
-- challenge came back wait in a per-thread queue for the next free connection.
local pending = {}
local user = 0
local users = tonumber(os.getenv("BENCH_USERS") or "50")
local user_format = os.getenv("BENCH_USER_FORMAT")
local password_format = os.getenv("BENCH_PASSWORD_FORMAT")
local start_body = string.format('{"app":"%s","provider":"%s"}', os.getenv("BENCH_APP") or "bench", os.getenv("BENCH_PROVIDER"))
local headers = {["Content-Type"] = "application/json"}
if os.getenv("BENCH_AUTH") then headers["Authorization"] = "Basic " .. os.getenv("BENCH_AUTH") end
completed = 0
local threads = {}

setup = function(thread)
  table.insert(threads, thread)
end

request = function()
  local flow = table.remove(pending)
  if flow then
    user = user % users + 1
    return wrk.format("POST", "/v1/flows/" .. flow, headers, string.format('{"answer":{"username":"%s","password":"%s"}}',
      string.format(user_format, user), string.format(password_format, user)))
  end
  return wrk.format("POST", "/v1/flows", headers, start_body)
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
