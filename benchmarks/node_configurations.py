"""Diagnosis (issue 33, session 25): does a node-slot configuration master lift the
deadline-hard relaxation's Dantzig–Wolfe bound? Not part of the product.

The master of ``sensaopt.exact.decompositions.colgen`` (whole per-job schedules against
the capacity rows) with those rows replaced by Gilmore–Gomory configurations: per node
and slot, convex combinations of integral packings (at most one (GPUs, CPU units, memory
units) item per job within the node's capacity), linked to the job columns item by item.
Pricing a configuration is a multi-dimensional knapsack, solved exactly by a Pareto
dynamic program, so the Lagrangian value at any prices is a valid bound of the
relaxation; dual smoothing (Wentges, ``ALPHA``) speeds the convergence. Plain column
generation runs first (its columns and its restricted MIP's schedule seed the configuration
master). Measured on w2, w1, w12 of ``results/gaps-philly-slo-20``: the configuration
master's LP ends 0.02-0.2 above the plain one's and rounds to the same bound
(``models/measurements.md``, session 25): the gap is not in the packing of a node-slot.

    WIN=OUT/instances/20-jobs/seed-0 taskset -c 1 python benchmarks/node_configurations.py 300 w2:30
"""
import math
import os
import sys
import time

import highspy
import numpy as np

from sensaopt.exact.decompositions.colgen import RC_EPS, Master
from sensaopt.exact.decompositions.pricing import NO_RULE, JobPricer
from sensaopt.exact.model.builder import objective_step, round_bound, to_objective
from sensaopt.exact.model.data import build_data, hard_data
from sensaopt.io import load_instance
from sensaopt.solvers.highs import limit_from_now
from sensaopt.solvers.highs_run import new_highs


def knapsack(items, cap):
    """items: list of (job, value, (g,c,m), key); at most one per job; max value. Returns (value, keys)."""
    by_job = {}
    for it in items:
        by_job.setdefault(it[0], []).append(it)
    states = {(0, 0, 0): (0.0, ())}
    G, C, M = cap
    for its in by_job.values():
        new = dict(states)
        for (g0, c0, m0), (v0, keys) in states.items():
            for _, v, (g, c, m), key in its:
                s = (g0 + g, c0 + c, m0 + m)
                if s[0] > G or s[1] > C or s[2] > M:
                    continue
                if s not in new or new[s][0] < v0 + v:
                    new[s] = (v0 + v, keys + (key,))
        # pareto prune: drop states dominated (more resources, no more value)
        lst = sorted(new.items(), key=lambda kv: -kv[1][0])
        kept = {}
        for s, val in lst:
            if any(o[0] <= s[0] and o[1] <= s[1] and o[2] <= s[2] for o in kept):
                continue
            kept[s] = val
        states = kept
    best = max(states.values(), key=lambda v: v[0])
    return best


class ConfigMaster:
    def __init__(self, data, seed_cols=(), seed_sched_cols=()):
        self.data = data
        self.step = objective_step(data)
        self.pricers = {jd.k: JobPricer.of(data, jd) for jd in data.jobs}
        nodes = data.instance.cluster.nodes
        self.caps = [(n.gpus, data.cpu_units(n.cpus, up=False), data.mem_units(n.mem_gb, up=False)) for n in nodes]
        # items
        self.link = {}  # (nd, t, k, q) -> row
        self.use = {}  # k -> [slot i][b] -> tuple(rows)
        self.items_at = {}  # (nd,t) -> list of (k, q, row)
        for jd in data.jobs:
            per_slot = []
            charges = [data.charges(jd.patterns[p], jd.options[o]) for p, o in jd.pairs]
            for t in data.slots(jd):
                row = []
                for ch in charges:
                    rs = []
                    for nd, g, c, m in ch:
                        if not (g or c or m):
                            continue
                        key = (nd, t, jd.k, (g, c, m))
                        if key not in self.link:
                            self.link[key] = len(self.link)
                            self.items_at.setdefault((nd, t), []).append((jd.k, (g, c, m), self.link[key]))
                        rs.append(self.link[key])
                    row.append(tuple(rs))
                per_slot.append(row)
            self.use[jd.k] = per_slot
        self.nl = len(self.link)
        self.ns = sorted(self.items_at)
        self.ns_row = {ns: self.nl + i for i, ns in enumerate(self.ns)}
        self.job_row0 = self.nl + len(self.ns)
        h = self.h = new_highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("threads", 1)
        inf = highspy.kHighsInf
        n_rows = self.job_row0 + data.n
        lower = np.concatenate([np.full(self.nl + len(self.ns), -inf), np.ones(data.n)])
        upper = np.concatenate([np.zeros(self.nl), np.ones(len(self.ns)), np.ones(data.n)])
        h.addRows(n_rows, lower, upper, 0, np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32), np.zeros(0))
        dearest = max(max(p.cost_at.values(), default=0) for p in self.pricers.values())
        self.art = float(data.n * dearest + 1)
        self.cols = []
        self.nconf = 0
        for jd in data.jobs:
            self.add_job(jd.k, None)
        for c in seed_cols:
            self.add_job(c.k, c)
        self.conf_seen = set()

    def add_job(self, k, col):
        if col is None:
            idx, val, cost = [self.job_row0 + k], [1.0], self.art
        else:
            acc = {self.job_row0 + k: 1.0}
            first = self.data.slots(self.data.jobs[k]).start
            for t, b in col.runs:
                for r in self.use[k][t - first][b]:
                    acc[r] = acc.get(r, 0.0) + 1.0
            idx, val, cost = list(acc), list(acc.values()), float(col.cost)
        self.h.addCol(cost, 0.0, highspy.kHighsInf, len(idx), np.array(idx, dtype=np.int32), np.array(val))
        self.cols.append(col)

    def add_conf(self, ns, rows):
        key = (ns, tuple(sorted(rows)))
        if key in self.conf_seen:
            return False
        self.conf_seen.add(key)
        idx = list(rows) + [self.ns_row[ns]]
        val = [-1.0] * len(rows) + [1.0]
        self.h.addCol(0.0, 0.0, highspy.kHighsInf, len(idx), np.array(idx, dtype=np.int32), np.array(val))
        self.cols.append(("conf", ns))
        self.nconf += 1
        return True

    def seed_from_columns(self, cols):
        """configs of an integral schedule (one column per job)"""
        at = {}
        for col in cols:
            first = self.data.slots(self.data.jobs[col.k]).start
            for t, b in col.runs:
                for r in self.use[col.k][t - first][b]:
                    at.setdefault(self._ns_of_row(r), []).append(r)
        for ns, rows in at.items():
            self.add_conf(ns, rows)

    def _ns_of_row(self, r):
        if not hasattr(self, "_rowns"):
            self._rowns = {row: (key[0], key[1]) for key, row in self.link.items()}
        return self._rowns[r]

    def lagrange(self, p):
        """L(p) and the best column per job / config per node-slot at prices p."""
        lag, jobs, confs = 0.0, [], []
        for jd in self.data.jobs:
            prices = [[sum(p[r] for r in rows) for rows in per_pair] for per_pair in self.use[jd.k]]
            total, col = self.pricers[jd.k].price(prices, NO_RULE)
            lag += total
            jobs.append((total, col))
        for ns in self.ns:
            its = [(k, p[r], q, r) for k, q, r in self.items_at[ns] if p[r] > 1e-9]
            if not its:
                confs.append((0.0, ()))
                continue
            val, rows = knapsack(its, self.caps[ns[0]])
            lag -= val
            confs.append((val, rows))
        return lag, jobs, confs

    def solve(self, stop_at, verbose=True, alpha=0.7):  # noqa: C901 - a diagnosis, kept in one piece
        best, it = -math.inf, 0
        h = self.h
        lp = None
        center = None
        while time.monotonic() < stop_at:
            limit_from_now(h, stop_at - time.monotonic())
            h.run()
            if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
                return best, lp, it, "lpfail " + h.modelStatusToString(h.getModelStatus())
            lp = h.getInfo().objective_function_value
            sol = h.getSolution()
            d = np.asarray(sol.row_dual)
            p_lp = np.maximum(-d[:self.nl], 0.0)
            z = np.maximum(-d[self.nl:self.job_row0], 0.0)
            mu = d[self.job_row0:]
            it += 1
            a = alpha if center is not None else 0.0
            added = 0
            while True:
                p = a * center + (1 - a) * p_lp if a > 0 else p_lp
                lag, jobs, confs = self.lagrange(p)
                if lag > best:
                    best, center = lag, p.copy()
                # add whatever prices out at the LP duals
                for jd, (_total, col) in zip(self.data.jobs, jobs):
                    if col is None:
                        continue
                    first = self.data.slots(jd).start
                    rc = col.cost - mu[jd.k] + sum(p_lp[r] for t, b in col.runs for r in self.use[jd.k][t - first][b])
                    if rc < -RC_EPS:
                        self.add_job(jd.k, col)
                        added += 1
                for i, (_val, rows) in enumerate(confs):
                    if rows and sum(p_lp[r] for r in rows) - z[i] > RC_EPS and self.add_conf(self.ns[i], rows):
                        added += 1
                if added or a == 0.0:
                    break
                a = 0.0  # misprice: at the LP duals
            if verbose and it % 5 == 1:
                d = self.data
                print(f"  it {it} lp {to_objective(d, lp):.3f} lag {to_objective(d, lag):.3f} "
                      f"best {to_objective(d, best):.3f} +{added}", flush=True)
            if not added:
                return max(best, lp - 1e-6 * abs(lp)), lp, it, "converged"
            if round_bound(self.data, best, self.step) >= lp - 1e-6:
                return best, lp, it, "closed"
        return best, lp, it, "time"


def main():
    limit = float(sys.argv[1])
    where = os.environ["WIN"]
    for spec in sys.argv[2:]:
        w, hz = spec.split(":")
        inst = load_instance(f"{where}/chronus-slo-{w}.json")
        data = hard_data(build_data(inst, int(hz), relaxed=True, refine=1), grow=True)

        def f(x, data=data):
            return None if x is None else round(to_objective(data, x), 3)
        t0 = time.monotonic()
        # plain DW first, its columns seed
        m = Master(data)
        node = m.solve(t0 + 30)
        print(w, "plain DW", f(round_bound(data, node.bound, m.step)), node.stop, round(time.monotonic() - t0, 1), "s",
              len(m.columns), "cols", flush=True)
        chosen = m.restricted_mip(5.0)
        cm = ConfigMaster(data, [c for c in m.columns if c is not None])
        if chosen:
            cm.seed_from_columns(chosen)
            print("  seeded MIP value", f(sum(c.cost for c in chosen)))
        t1 = time.monotonic()
        best, lp, it, stop = cm.solve(t1 + limit, alpha=float(os.environ.get('ALPHA', '0.7')))
        print(w, "CONFIG DW", f(round_bound(data, best, cm.step)) if best > -math.inf else None, "lp", f(lp), it, "its", stop,
              round(time.monotonic() - t1, 1), "s", cm.nconf, "configs", flush=True)


if __name__ == "__main__":
    main()
