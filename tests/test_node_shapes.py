"""Node shapes (synergy, chronus, alibaba) and what a trace duration means on each
(``WorkloadConfig.duration_at``): the derived Alibaba shape, the one place the
convention applies, and run-config keys that keep their old meaning."""

import json

import pytest

from sensaopt.cli import main
from sensaopt.config import WorkloadConfig
from sensaopt.datasets import DATA_FILES, where
from sensaopt.errors import InputError
from sensaopt.profiles import catalog
from sensaopt.sweep.config import RunConfig
from sensaopt.traces.presets import ALIBABA_NODE, NODE_VARIANTS, alibaba_node_shape, preset_cluster, preset_spec
from sensaopt.traces.sensitivity import SensitivityMix
from sensaopt.traces.sources import _synthetic, workload_instance
from sensaopt.traces.trace import DURATION_AT, TraceData, TraceJob, build_instance, resolve_duration_at


def test_alibaba_variant_is_the_derived_shape_when_the_file_is_present():
    if where(DATA_FILES["alibaba-nodes"].path) is None:
        pytest.skip("alibaba-v2023 node list absent (sensaopt data fetch alibaba-nodes, or set SENSAOPT_TRACES)")
    shape = alibaba_node_shape()
    assert shape == ALIBABA_NODE  # the pinned constants are what the file gives
    assert shape["nodes"] == 549 and shape["of_nodes"] == 1213
    c, m = NODE_VARIANTS.get("alibaba")
    assert (c, m) == (shape["cpu_milli"] / 1000 / 8, shape["memory_mib"] / 1024 / 8) == (12.0, 48.0)


def test_alibaba_node_shape_on_a_hand_made_list(tmp_path):
    p = tmp_path / "nodes.csv"
    p.write_text("sn,cpu_milli,memory_mib,gpu,model\n"
                 "a,96000,393216,8,G2\nb,96000,393216,8,G2\nc,128000,786432,8,G3\n"
                 "d,64000,262144,2,P100\ne,64000,262144,2,P100\ne,64000,262144,2,P100\n")
    assert alibaba_node_shape(str(p)) == {"gpus": 8, "cpu_milli": 96000, "memory_mib": 393216, "nodes": 2, "of_nodes": 6}
    assert alibaba_node_shape(str(p), gpus=2)["nodes"] == 3
    with pytest.raises(InputError):
        alibaba_node_shape(str(p), gpus=4)


def test_presets_know_every_variant():
    s = preset_spec("philly-8-alibaba")
    assert (s.nodes, s.node_gpus, s.cpu_per_gpu, s.mem_per_gpu) == (120, 8, 12.0, 48.0)
    t = preset_cluster("2x16-alibaba").node_types[0]
    assert (t.gpus, t.cpus, t.mem_gb) == (16, 192, 768.0)
    assert preset_spec("philly-8", node="chronus").cpu_per_gpu == 16.0


def _data():
    jobs = [TraceJob(f"j{k}", 10.0 * k, [1, 2, 4, 8, 16][k % 5], 30.0 + 7 * k, deadline=10.0 * k + 200 + 9 * k) for k in range(30)]
    return TraceData("t", "hand-made", jobs, has_deadlines=True)


MIX = SensitivityMix(sensitive_fraction=0.5)


def test_on_synergy_nodes_both_conventions_give_the_same_instance():
    cl = preset_cluster("2x8")
    a = build_instance(_data(), cl, mix=MIX, seed=3, duration_at="node")
    b = build_instance(_data(), cl, mix=MIX, seed=3, duration_at="reference")
    assert a == b
    assert resolve_duration_at(None, cl) == resolve_duration_at("node", cl) == "reference"


@pytest.mark.parametrize("variant", ["chronus", "alibaba"])
def test_node_convention_scales_work_by_the_speed_at_the_node_share(variant):
    cl = preset_cluster(f"2x8-{variant}")
    t = cl.node_types[0]
    ref = build_instance(_data(), cl, mix=MIX, seed=3, duration_at="reference")
    node = build_instance(_data(), cl, mix=MIX, seed=3, duration_at="node")
    assert resolve_duration_at(None, cl) == "node" and resolve_duration_at("reference", cl) == "reference"
    cat = catalog()
    changed = 0
    for r, n, d in zip(ref.jobs, node.jobs, _data().jobs):
        assert r.work == d.work  # reference: work = the trace duration
        assert n.model == r.model and n.deadline == r.deadline == d.deadline  # deadlines as the trace gives them
        speed = cat[n.model].speed(t.cpus / t.gpus, t.mem_gb / t.gpus)
        assert n.work == pytest.approx(d.work * speed)  # at the node's share the job runs exactly its duration
        changed += n.work != r.work
    assert changed > 0


def test_an_unknown_convention_is_one_input_error():
    with pytest.raises(InputError, match="duration_at"):
        resolve_duration_at("bogus", preset_cluster("2x8"))
    with pytest.raises(InputError, match="duration_at"):
        build_instance(_data(), preset_cluster("2x8"), duration_at="bogus")


def test_workload_option_reaches_the_instance():
    base = WorkloadConfig(trace="synthetic", jobs=12, preset="2x8-chronus")
    node, _ = workload_instance(base)
    ref, _ = workload_instance(WorkloadConfig(trace="synthetic", jobs=12, preset="2x8-chronus", duration_at="reference"))
    raw = _synthetic(12, 0)
    assert [j.work for j in ref.jobs] == [j.work for j in raw.jobs]
    assert [j.work for j in node.jobs] != [j.work for j in ref.jobs]
    syn_node, _ = workload_instance(WorkloadConfig(trace="synthetic", jobs=12, preset="2x8", duration_at="node"))
    syn, _ = workload_instance(WorkloadConfig(trace="synthetic", jobs=12, preset="2x8"))
    assert syn_node == syn


def test_run_config_keys_keep_their_old_meaning():
    old = {"trace": "chronus-slo", "preset": "philly-8-chronus", "policy": "edf"}  # a config stored before duration_at
    legacy = RunConfig.from_dict(old)
    assert legacy.duration_at == "reference" and "duration_at" not in legacy.to_dict()
    assert RunConfig(**old, duration_at="reference").key() == legacy.key()
    new = RunConfig(**old)  # the new default on Chronus nodes: a key of its own
    assert new.to_dict()["duration_at"] == "node" and new.key() != legacy.key()
    assert RunConfig.from_dict(json.loads(json.dumps(new.to_dict()))).key() == new.key()
    assert RunConfig(**old, duration_at="node").key() == new.key()
    syn = {"trace": "chronus-slo", "preset": "philly-8", "policy": "edf"}  # Synergy nodes: every value is the old key
    keys = {RunConfig(**syn, duration_at=v).key() for v in (None, *DURATION_AT)} | {RunConfig.from_dict(syn).key()}
    assert len(keys) == 1 and "duration_at" not in RunConfig(**syn).to_dict()


def test_simulate_and_sweep_take_duration_at(tmp_path, capsys):
    args = ["--trace", "synthetic", "--jobs", "8", "--preset", "2x8-chronus", "--policy", "edf", "--quiet"]
    assert main(["simulate", *args, "--duration-at", "reference", "--out-dir", str(tmp_path / "a")]) == 0
    assert main(["simulate", *args, "--out-dir", str(tmp_path / "b")]) == 0
    wa = [r.split(",")[3] for r in (tmp_path / "a" / "edf.jobs.csv").read_text().splitlines()[1:]]
    wb = [r.split(",")[3] for r in (tmp_path / "b" / "edf.jobs.csv").read_text().splitlines()[1:]]
    assert wa != wb
    assert main(["sweep", *args[:-1], "--duration-at", "reference", "--duration-at", "node", "--serial", "--quiet",
                 "--out-dir", str(tmp_path / "s")]) == 0
    cfgs = [json.loads(p.read_text())["config"] for p in (tmp_path / "s" / "runs").glob("*.json")]
    assert sorted(c.get("duration_at", "reference") for c in cfgs) == ["node", "reference"]
    assert main(["simulate", *args, "--duration-at", "bogus", "--out-dir", str(tmp_path / "c")]) == 2
    capsys.readouterr()
