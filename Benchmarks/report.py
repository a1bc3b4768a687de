"""Summarises Benchmarks/run.sh results: medians and ranges, and ratios to raw AsyncHTTPClient per repetition."""
import json
import statistics
import sys
from collections import defaultdict

rows = [json.loads(line) for line in open(sys.argv[1])]
runs = defaultdict(dict)  # (workload, client) -> rep -> result
for row in rows:
    result = row["result"]
    runs[(result["workload"], result["client"])][row["rep"]] = result


def med(values):
    return statistics.median(values) if values else float("nan")


def span(values):
    return f"{min(values):.3f}–{max(values):.3f}"


print()
header = f"{'workload':<15} {'client':<19} {'wall s (min–max)':<24} {'rate':>14} {'CPU s':>7} {'CPU µs/req':>11} {'peak RSS MiB':>13} {'CPU ×AHC':>9} {'wall ×AHC':>9} {'RSS ×AHC':>9}"
print(header)
print("-" * len(header))
ORDER = ["w1", "w1-nginx", "w1-nginx-status", "w1-api", "w1-api-status", "w2", "w2-nginx", "w2-nginx-status", "w2-api",
         "w2-api-status", "w2-raised", "w3", "w4"]
for workload in sorted({w for w, _ in runs}, key=lambda w: (ORDER.index(w) if w in ORDER else len(ORDER), w)):
    baseline = runs.get((workload, "ahc"), {})
    for client in ["bluebonnet", "bluebonnet-handler", "bluebonnet-notifications", "ahc", "ahc-delegate", "urlsession"]:
        reps = runs.get((workload, client))
        if not reps:
            continue
        results = list(reps.values())
        walls = [r["wallSeconds"] for r in results]
        cpus = [r["cpuUserSeconds"] + r["cpuSystemSeconds"] for r in results]
        rss = [r["peakRSSKiB"] / 1024 for r in results]
        requests = results[0]["requests"]
        if workload == "w4":
            rate = f"{med([r['bytes'] / 1048576 / r['wallSeconds'] for r in results]):.0f} MiB/s"
        else:
            rate = f"{med([requests / w for w in walls]):.0f} req/s"
        paired = [rep for rep in reps if rep in baseline]
        def ratio(key):
            return med([key(reps[rep]) / key(baseline[rep]) for rep in paired if key(baseline[rep]) > 0])
        cpu_of = lambda r: r["cpuUserSeconds"] + r["cpuSystemSeconds"]
        print(f"{workload:<15} {client:<19} {med(walls):>8.3f} ({span(walls)}) {rate:>14} {med(cpus):>7.2f} "
              f"{med(cpus) / requests * 1e6:>11.0f} {med(rss):>13.0f} {ratio(cpu_of):>9.2f} "
              f"{ratio(lambda r: r['wallSeconds']):>9.2f} {ratio(lambda r: r['peakRSSKiB']):>9.2f}")
    print()
print("Ratios are medians of per-repetition ratios to raw AsyncHTTPClient in the same run (lower is better).")
