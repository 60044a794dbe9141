dofile(os.getenv("BENCH_LIB") .. "/report.lua")
