-- POST one fixed form body (BENCH_BODY) with Basic client credentials (BENCH_AUTH).
wrk.method = "POST"
wrk.body = os.getenv("BENCH_BODY")
wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
wrk.headers["Authorization"] = "Basic " .. os.getenv("BENCH_AUTH")
dofile(os.getenv("BENCH_LIB") .. "/report.lua")
