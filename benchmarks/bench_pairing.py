"""Benchmark 3: the pairing step alone for 200, 1,000 and 5,000 candidate jobs.

Candidates are the jobs of a generated instance (half sensitive, first round, all
queued) on a cluster large enough that the pairing window takes them all. Timed:
``make_pairs`` end to end (candidate split, weight matrix, matching) with the
policy's per-run gain cache filled, and the weight matrix and the matching separately.
``--running``: the second round instead, where the jobs the first round placed are
running, so the pair hysteresis (``pairing.switch_penalty``) is computed too
(``pair_matrix`` timed beside ``weight_matrix``).
The networkx reference is timed (and its total weight compared) up to
``--networkx-max`` candidates. Target: 1,000 candidates ≤ 20 ms.
"""

from __future__ import annotations

import argparse
import math
import time

from sensaopt.generate import GeneratorConfig, generate
from sensaopt.policies.base import JobState, RoundState
from sensaopt.policies.sensascale import SensaScalePolicy
from sensaopt.policies.sensascale import pairing as pm
from sensaopt.policies.sensascale.analysis import analyse

from _common import ms_stats, write_record


def setup(n: int, seed: int = 0, method: str = "assignment", levels: int = 0, running: bool = False):
    """(policy, infos, cluster, now, R) for ``n`` candidate jobs, all inside the window;
    ``running``: round 1 after the policy's own round-0 decision (those jobs run)."""
    nodes = max(2, math.ceil(n * 2.0 / 8))  # mean job ≈ 2 GPUs; window 1.5 × GPUs ≥ demand
    inst = generate(GeneratorConfig(jobs=n, nodes=nodes, seed=seed, load=1.0))
    states = [JobState(spec=j, remaining=j.work) for j in inst.jobs]
    st = RoundState(0, 0.0, inst.round_minutes, inst.cluster, inst.overheads, states)
    pol = SensaScalePolicy(pairing_method=method, urgency_levels=levels)
    pol.reset(inst)
    if running:
        alloc = pol.decide(st)
        for js in states:
            if js.id in alloc:
                js.last_round, js.placements = 0, alloc[js.id]
        st = RoundState(1, inst.round_minutes, inst.round_minutes, inst.cluster, inst.overheads, states)
    infos = analyse(st, pol.facts, pol.config)
    return pol, infos, inst.cluster, st.now, st.round_minutes


def timeit(fn, repeat: int) -> dict:
    """Wall and CPU time statistics (ms) of ``repeat`` calls after one warm-up call."""
    fn()
    wall, cpu = [], []
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    out = ms_stats(wall)
    out["cpu_p50_ms"] = ms_stats(cpu)["p50_ms"]
    return out


def policy_match(sens, insens, cluster, now, R, cfg, gains):
    """The policy's matching step (job-index pairs) for its configured method."""
    if cfg.pairing_method == "classes":
        Wc, sm, im = pm.class_weights(sens, insens, cluster, now, R, cfg.weight_scale, gains, cfg.urgency_levels)
        return pm.match_classes(Wc, sm, im)
    return pm.match(pm.weight_matrix(sens, insens, cluster, now, R, cfg.weight_scale, gains, cfg.urgency_levels), cfg.pairing_method)


def run(sizes=(200, 1000, 5000), repeat: int = 20, networkx_max: int = 200, method: str = "assignment", levels: int = 0,
        running: bool = False) -> dict:
    figs = {}
    for n in sizes:
        pol, infos, cluster, now, R = setup(n, method=method, levels=levels, running=running)
        cfg = pol.config
        sens, insens = pm.candidates(infos, cluster, cfg)
        W = pm.weight_matrix(sens, insens, cluster, now, R, cfg.weight_scale, None, levels)
        reps = repeat if n <= 1000 else max(3, repeat // 4)
        f = {
            "candidates": len(sens) + len(insens),
            "sensitive": len(sens),
            "insensitive": len(insens),
            "make_pairs": timeit(lambda: pm.make_pairs(infos, cluster, cfg, now, R, pol._gains), reps),
            "weight_matrix": timeit(lambda: pm.weight_matrix(sens, insens, cluster, now, R, cfg.weight_scale, pol._gains), reps),
            "match": timeit(lambda: policy_match(sens, insens, cluster, now, R, cfg, pol._gains), reps),
        }
        if running:
            inc = pm.Incumbents.of(infos, cluster, pol._partners)
            f["running"] = sum(x.running for x in sens + insens)
            f["pair_matrix"] = timeit(lambda: pm.pair_matrix(sens, insens, cluster, now, R, cfg.weight_scale, pol._gains, levels, inc,
                                                             cfg.pair_hysteresis), reps)
        fast = policy_match(sens, insens, cluster, now, R, cfg, pol._gains)
        f["weight_policy"] = int(sum(int(W[a, b]) for a, b in fast))
        if f["candidates"] <= networkx_max:
            t = time.perf_counter()
            ref = pm.match_networkx(W)
            f["networkx_ms"] = round((time.perf_counter() - t) * 1e3, 1)
            f["weight_networkx"] = int(sum(int(W[a, b]) for a, b in ref))
            f["same_weight"] = f["weight_networkx"] == f["weight_policy"]
        figs[str(n)] = f
        print(f"[pairing] {n:5d} jobs -> {f['candidates']} candidates ({len(sens)} x {len(insens)}): make_pairs p50 {f['make_pairs']['p50_ms']:.2f} ms (cpu {f['make_pairs']['cpu_p50_ms']:.2f}) "
              f"(weights {f['weight_matrix']['p50_ms']:.2f} ms, match {f['match']['p50_ms']:.2f} ms, cpu {f['match']['cpu_p50_ms']:.2f} ms)"
              + (f"; networkx {f['networkx_ms']} ms same weight: {f['same_weight']}" if "networkx_ms" in f else "")
              + (f"; {f['running']} running, pair_matrix (hysteresis) {f['pair_matrix']['p50_ms']:.2f} ms" if running else ""))
    return figs


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", default="200,1000,5000")
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--networkx-max", type=int, default=200)
    ap.add_argument("--method", default="assignment", help="assignment | classes | networkx")
    ap.add_argument("--urgency-levels", type=int, default=0)
    ap.add_argument("--running", action="store_true", help="time round 1, with round 0's jobs running (hysteresis on)")
    a = ap.parse_args(argv)
    figs = run(tuple(int(x) for x in a.sizes.split(",")), a.repeat, a.networkx_max, a.method, a.urgency_levels, a.running)
    write_record("pairing", figs, vars(a))
    return figs


if __name__ == "__main__":
    main()
