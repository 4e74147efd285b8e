"""Sweeps: a real Dask LocalCluster (2 worker processes over TCP) gives the same
results as a serial run; the hash-keyed store makes an interrupted sweep resume."""

import json

import pytest

from sensaopt.config import as_pairs
from sensaopt.sweep import ResultStore, RunConfig, grid, run_config, run_serial, run_sweep
from sensaopt.sweep.report import summary_csv

BASE = RunConfig(trace="synthetic", jobs=10, preset="2x8", round_minutes=10.0)


def configs():
    return grid(BASE, policy=["edf", "fifo"], seed=[0, 1], sensitive_fraction=[0.2, 0.8])


def comparable(rec):
    return {k: rec[k] for k in ("key", "config", "instance", "objective", "metrics", "jct")}


def test_key_is_stable_and_sensitive_to_every_field():
    a = RunConfig()
    assert a.key() == RunConfig().key()
    assert len({RunConfig(seed=s).key() for s in range(5)}) == 5
    assert RunConfig(cpu_per_gpu=4.0).key() != a.key() and RunConfig(load=1.2).key() != a.key()
    assert RunConfig.from_dict(a.to_dict()) == a
    with pytest.raises(ValueError):
        RunConfig.from_dict({"nope": 1})


def test_keys_of_stored_runs_do_not_change():
    # values computed before RunConfig extended WorkloadConfig and gained guided/policy_config
    assert RunConfig().key() == "79825293c14c2625dc17"
    # (4 cores per GPU is not the reference share: runs stored then made work = duration,
    # duration_at="reference"; the new default there, "node", is another run with its own key)
    old = RunConfig(trace="chronus-slo", preset="philly-16", policy="sensascale", seed=2, load=1.2, cpu_per_gpu=4.0, days=1.0,
                    duration_at="reference")
    assert old.key() == "77bf22f3aa93f2b559e3"
    assert "policy_config" not in old.to_dict() and "guided" not in old.to_dict()


def test_policy_config_is_part_of_the_key_and_round_trips():
    a = RunConfig(policy="sensascale", policy_config=as_pairs({"pairing": False, "backfill": "none"}))
    assert a.policy_config == (("backfill", "none"), ("pairing", False))
    assert a.key() != RunConfig(policy="sensascale").key()
    assert RunConfig.from_dict(json.loads(json.dumps(a.to_dict()))) == a
    assert RunConfig(guided=True).key() != RunConfig().key()


def test_sweep_cli_set_reaches_the_runs(tmp_path, capsys):
    from sensaopt.cli import main
    from sensaopt.simulator import simulate
    from sensaopt.traces.sources import make_instance

    args = ["sweep", "--jobs", "20", "--preset", "1x8", "--round-minutes", "10", "--policy", "sensascale", "--serial", "-q",
            "--out-dir", str(tmp_path)]
    assert main(args + ["--set", "backfill=none", "--set", "pairing=false"]) == 0
    (rec,) = ResultStore(tmp_path).records()
    assert rec["config"]["policy_config"] == [["backfill", "none"], ["pairing", False]]
    inst, _ = make_instance("synthetic", "1x8", jobs=20, round_minutes=10.0)
    assert rec["objective"] == simulate(inst, "sensascale", policy_config={"backfill": "none", "pairing": False}).objective
    assert rec["objective"] != simulate(inst, "sensascale").objective


def test_dask_localcluster_equals_serial(tmp_path):
    from distributed import Client, LocalCluster

    cfgs = configs()
    serial = ResultStore(tmp_path / "serial")
    rep_s = run_serial(cfgs, serial)
    assert rep_s.ok and len(rep_s.computed) == len(cfgs)

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, protocol="tcp", dashboard_address=":0") as cluster:
        assert cluster.scheduler_address.startswith("tcp://")
        with Client(cluster) as client:
            client.wait_for_workers(2)
            assert len(client.scheduler_info()["workers"]) == 2
            dist = ResultStore(tmp_path / "dask")
            # an "interrupted" sweep: half of the runs first, over the scheduler address
            first = cfgs[: len(cfgs) // 2]
            rep1 = run_sweep(first, dist, scheduler=cluster.scheduler_address)
            assert rep1.ok and rep1.reused == 0 and len(rep1.computed) == len(first)
            mtimes = {k: dist.path(k).stat().st_mtime_ns for k in dist.keys()}  # noqa: SIM118 (a Store)
            rep2 = run_sweep(cfgs, dist, client=client)
            assert rep2.ok and rep2.reused == len(first) and len(rep2.computed) == len(cfgs) - len(first)
            assert all(dist.path(k).stat().st_mtime_ns == t for k, t in mtimes.items())  # not redone
            rep3 = run_sweep(cfgs, dist, client=client)
            assert rep3.reused == len(cfgs) and not rep3.computed

    assert serial.keys() == dist.keys() == sorted(c.key() for c in cfgs)
    for k in serial.keys():  # noqa: SIM118 (a Store, not a dict)
        assert comparable(serial.get(k)) == comparable(dist.get(k))
    table = summary_csv(dist.records())
    assert table.count("\n") == len(cfgs) + 1


def test_failures_are_recorded_and_retried(tmp_path):
    store = ResultStore(tmp_path)
    bad = RunConfig(trace=str(tmp_path / "missing.csv"))
    rep = run_serial([bad, BASE], store)
    assert list(rep.failed) == [bad.key()] and "no such file" in rep.failed[bad.key()]
    assert json.loads((tmp_path / "failed" / f"{bad.key()}.json").read_text())["config"]["trace"] == bad.trace
    rep2 = run_serial([bad, BASE], store)
    assert rep2.reused == 1 and list(rep2.failed) == [bad.key()]  # retried, still failing


def test_run_config_record_matches_direct_simulation():
    from sensaopt.simulator import simulate
    from sensaopt.traces.sources import make_instance

    rec = run_config(BASE)
    inst, _ = make_instance("synthetic", "2x8", jobs=10, round_minutes=10.0)
    res = simulate(inst, "edf")
    assert rec["objective"] == pytest.approx(res.objective)
    assert rec["metrics"]["avg_jct"] == pytest.approx(sum(rec["jct"]) / len(rec["jct"]))


def test_sweep_cli_resumes(tmp_path, capsys):
    from sensaopt.cli import main

    args = ["sweep", "--trace", "synthetic", "--jobs", "8", "--preset", "1x8", "--policy", "edf", "--seed", "0", "--seed", "1",
            "--cpu-per-gpu", "preset", "--cpu-per-gpu", "4", "--serial", "-q", "--out-dir", str(tmp_path)]
    assert main(args) == 0
    assert "4 runs: 0 reused, 4 computed" in capsys.readouterr().out
    assert main(args + ["--seed", "2"]) == 0
    assert "6 runs: 4 reused, 2 computed" in capsys.readouterr().out
    assert (tmp_path / "summary.csv").read_text().count("\n") == 7


def test_sweep_starts_the_longest_runs_first(tmp_path):
    """On one worker the runs start in :func:`expected_cost` order, longest first
    (a Chronus run before SensaScale before EDF), whatever the order given."""
    from distributed import Client, LocalCluster

    log = tmp_path / "started"  # a file: Dask may copy the function and its closure

    def record(cfg):
        with open(log, "a") as f:
            f.write(cfg.policy + "\n")
        return run_config(cfg)

    cfgs = [grid(BASE, policy=[p])[0] for p in ("edf", "sensascale", "fifo", "chronus")]
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster, Client(cluster) as client:
        rep = run_sweep(cfgs, ResultStore(tmp_path / "store"), client=client, run=record)
    assert rep.ok and log.read_text().split() == ["chronus", "sensascale", "fifo", "edf"]


def test_chronus_records_keep_the_lease_solve_counts():
    rec = run_config(grid(BASE, policy=["chronus"])[0])
    ls = rec["lease"]
    assert ls["lease_solves"] >= 1
    assert ls["lease_solves"] == ls["milp_optimal"] + ls["milp_time_limit"] + ls["fallbacks"]
    assert run_config(BASE)["lease"] == {}
