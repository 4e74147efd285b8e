"""How SensaScale's pairing window (``pairing_window``: a queue prefix of that many times the
cluster's GPUs) shapes its pairs, counted round by round (``models/sensascale.md``).

``outside``: on a trace workload, each run's running pairable jobs (fewer GPUs than a node)
that fall outside the window each round, and how many of them ran as last round's pair
(partners the hysteresis cannot keep, since they are not in the matching):

    python benchmarks/pairing_window_probe.py outside --order lst-strict edf          # full SLO trace, seed 0

``misses``: the jobs one window misses and the other meets, with the rounds each ran and the
rounds it ran as a pair member under both windows:

    python benchmarks/pairing_window_probe.py misses --start 5760 --days 2             # the loaded window

Both use ``--trace`` (default ``chronus-slo``), ``--preset`` (``philly-8``), ``--seed`` (0) and
``--windows`` (1.5 1.0). Counts only; nothing timed.
"""

from __future__ import annotations

import argparse
from collections import Counter

from sensaopt.config import WorkloadConfig
from sensaopt.metrics import JobMetrics, Metrics, job_metrics
from sensaopt.policies.sensascale import SensaScalePolicy
from sensaopt.policies.sensascale.pairing import candidates
from sensaopt.simulator import simulate
from sensaopt.traces.sources import workload_instance
from sensaopt.validator import check_schedule


class CountingPolicy(SensaScalePolicy):
    """SensaScale that counts, each round, the running pairable jobs (fewer GPUs than a node)
    that :func:`~sensaopt.policies.sensascale.pairing.candidates` leaves out of the matching
    (``out_run``; with the default ``pairing_classes`` every pairable job inside the window is
    a candidate, so these are the ones outside it) and last round's partners among them
    (``out_partner``), and after each decision the rounds each job ran (``ran``) and ran
    paired (``paired``)."""

    def reset(self, instance) -> None:
        super().reset(instance)
        self.counts: Counter = Counter()
        self.ran: Counter = Counter()
        self.paired: Counter = Counter()

    def decide(self, state):
        last_partners = self._partners
        alloc = super().decide(state)
        queue = self._queue.infos  # this round's queue, as the pairing saw it
        inside = {x.id for side in candidates(queue, state.cluster, self.config) for x in side}
        max_g = state.cluster.reference_type.gpus
        for info in queue:
            if info.running and info.gpus < max_g and info.id not in inside:
                self.counts["out_run"] += 1
                self.counts["out_partner"] += info.id in last_partners
        self.ran.update(alloc.keys())  # (a mapping would add its values)
        self.paired.update(self._partners.keys())
        return alloc


def _run(inst, **knobs) -> tuple[CountingPolicy, Metrics, dict[str, JobMetrics]]:
    """(the policy with its counts, the run's metrics, job id -> its JobMetrics)."""
    pol = CountingPolicy(**knobs)
    res = simulate(inst, pol)
    return pol, res.metrics, {m.job: m for m in job_metrics(inst, check_schedule(inst, res.schedule))}


def outside(inst, orders: list[str], windows: list[float]) -> None:
    for order in orders:
        for w in windows:
            pol, m, _ = _run(inst, deadline_order=order, pairing_window=w)
            print(f"order {order:10s} window {w:3.1f}: {m.slo_violations} violations, {m.preemptions} restarts; "
                  f"running pairable job-rounds outside the window {pol.counts['out_run']:,}, "
                  f"last round's partners among them {pol.counts['out_partner']:,}", flush=True)


def misses(inst, windows: list[float]) -> None:
    a, b = windows
    (pa, ma, ra), (pb, mb, rb) = _run(inst, pairing_window=a), _run(inst, pairing_window=b)
    for w, pol, m in ((a, pa, ma), (b, pb, mb)):
        print(f"window {w}: {m.slo_violations} violations, avg JCT {m.avg_jct:.1f} min, "
              f"paired job-rounds {sum(pol.paired.values()):,}")
    jobs = {j.id: j for j in inst.jobs}
    for label, mine, other in ((f"missed at {b} only", rb, ra), (f"missed at {a} only", ra, rb)):
        ids = [k for k in jobs if mine[k].met_deadline is False and other[k].met_deadline is not False]
        print(f"{label}: {len(ids)}")
        for k in ids:
            j = jobs[k]
            print(f"  {k}: {j.gpus} GPUs, work {j.work:.0f} min at speed 1, slack {j.deadline - j.arrival - j.work:.0f} min | "
                  f"window {a}: ran {pa.ran[k]} rounds, paired {pa.paired[k]}, JCT {ra[k].jct:.0f} | "
                  f"window {b}: ran {pb.ran[k]}, paired {pb.paired[k]}, JCT {rb[k].jct:.0f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("what", choices=("outside", "misses"))
    ap.add_argument("--trace", default="chronus-slo")
    ap.add_argument("--preset", default="philly-8")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--start", type=float, default=0.0, help="minutes")
    ap.add_argument("--days", type=float, default=None)
    ap.add_argument("--order", nargs="+", default=["lst-strict", "edf"], help="deadline_order values (outside)")
    ap.add_argument("--windows", nargs=2, type=float, default=[1.5, 1.0])
    args = ap.parse_args()
    inst, _ = workload_instance(WorkloadConfig(trace=args.trace, preset=args.preset, seed=args.seed, start=args.start,
                                               days=args.days))
    if args.what == "outside":
        outside(inst, args.order, args.windows)
    else:
        misses(inst, args.windows)


if __name__ == "__main__":
    main()
