-- Shared by the bench scripts: prints one machine-readable line wrk's summary lacks.
done = function(summary, latency, requests)
  local seconds = summary.duration / 1e6
  io.write(string.format("RESULT requests=%d errors=%d rps=%.0f p50_ms=%.2f p90_ms=%.2f p99_ms=%.2f max_ms=%.2f non2xx=%d\n",
    summary.requests, summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    summary.requests / seconds, latency:percentile(50) / 1000, latency:percentile(90) / 1000,
    latency:percentile(99) / 1000, latency.max / 1000, summary.errors.status))
end
