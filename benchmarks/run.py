"""Run the benchmark suite; each benchmark prints its figures and writes a JSON record
(machine, load average, package versions, git commit) to ``benchmarks/results/``.

    python benchmarks/run.py                 # all: trace, round, pairing, scaling
    python benchmarks/run.py round pairing   # a selection
    python benchmarks/run.py --quick         # smaller sizes (a smoke run, minutes)

Benchmarks (see each script's docstring):

* ``trace``    (bench_trace.py)   full Philly SLO trace, sensascale and edf
* ``round``    (bench_round.py)   one decision with 1,000 queued jobs on 120 nodes
* ``pairing``  (bench_pairing.py) pairing alone, 200 / 1,000 / 5,000 candidates
* ``scaling``  (bench_scaling.py) 10k / 30k / 100k synthetic jobs
* ``equivalence`` (check_equivalence.py) schedules identical to the pre-optimisation commit

Targets (2-core machine): trace < 60 s, < 1 GiB and < 3x edf for sensascale; round
p50 <= 10 ms, p99 <= 50 ms; pairing of 1,000 candidates <= 20 ms; scaling per job
within 1.3x from 10k to 100k. The machine may be shared: records carry the load
average and CPU times next to wall times.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_pairing  # noqa: E402
import bench_round  # noqa: E402
import bench_scaling  # noqa: E402
import bench_trace  # noqa: E402
import check_equivalence  # noqa: E402

ALL = ("trace", "round", "pairing", "scaling")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("which", nargs="*", help=f"benchmarks to run (default: {' '.join(ALL)}); also: equivalence")
    ap.add_argument("--quick", action="store_true", help="small sizes: trace limited to 3,000 jobs, scaling 2k/6k/20k, pairing 200/1,000")
    a = ap.parse_args(argv)
    which = a.which or list(ALL)
    status = 0
    for name in which:
        t = time.perf_counter()
        print(f"== {name}", flush=True)
        if name == "trace":
            bench_trace.main(["--limit", "3000"] if a.quick else [])
        elif name == "round":
            bench_round.main(["--repeat", "20"] if a.quick else [])
        elif name == "pairing":
            bench_pairing.main(["--sizes", "200,1000"] if a.quick else [])
        elif name == "scaling":
            bench_scaling.main(["--sizes", "2000,6000,20000"] if a.quick else [])
        elif name == "equivalence":
            status |= check_equivalence.main(["--trace-jobs", "1000"] if a.quick else [])
        else:
            ap.error(f"unknown benchmark {name!r}")
        print(f"== {name} done in {time.perf_counter() - t:.1f} s", flush=True)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
