-- Passwordless email-code sign-ins up to the delivered code, two requests each: POST /v1/flows starts a
-- flow, POST /v1/flows/{id} answers with a fresh address, which makes the broker send a code through
-- SMTP (STARTTLS + AUTH) and answer with the email_code challenge. Every address is new, so the
-- per-address resend limit never applies; the benchmark measures code delivery.
local pending = {}
local counter = 0
local thread_id = 0
sent = 0
local threads = {}

setup = function(thread)
  thread_id = thread_id + 1
  thread:set("id", thread_id)
  table.insert(threads, thread)
end

init = function()
  -- `id` is this thread's global, set by setup().
  thread_name = tostring(id)
end

request = function()
  local flow = table.remove(pending)
  if flow then
    counter = counter + 1
    return wrk.format("POST", "/v1/flows/" .. flow, {["Content-Type"] = "application/json"},
      string.format('{"answer":{"email":"load-%s-%d@bench.example"}}', thread_name, counter))
  end
  return wrk.format("POST", "/v1/flows", {["Content-Type"] = "application/json"}, '{"app":"bench","provider":"email"}')
end

response = function(status, headers, body)
  if status == 200 and body:find('"email_code"', 1, true) then
    sent = sent + 1
  elseif status == 201 then
    local flow = body:match('"flow"%s*:%s*"([^"]+)"')
    if flow then table.insert(pending, flow) end
  end
end

local report_requests = dofile(os.getenv("BENCH_LIB") .. "/report.lua") or done
done = function(summary, latency, requests)
  local codes = 0
  for _, thread in ipairs(threads) do codes = codes + (thread:get("sent") or 0) end
  io.write(string.format("CODES sent=%d per_second=%.0f\n", codes, codes / (summary.duration / 1e6)))
  report_requests(summary, latency, requests)
end
