"""Model-type assignment and cluster presets."""

import numpy as np
import pytest

from sensaopt.errors import InputError
from sensaopt.generate import model_classes
from sensaopt.profiles import catalog
from sensaopt.traces.paths import ALIBABA_PODS, traces_dir
from sensaopt.traces.presets import preset_cluster, preset_spec
from sensaopt.traces.sensitivity import SensitivityMix, alibaba_cpu_per_gpu


@pytest.mark.parametrize("frac", [0.0, 0.3, 0.8, 1.0])
def test_fraction_mode(frac):
    names = SensitivityMix(sensitive_fraction=frac).assign(4000, seed=1)
    sens, _ = model_classes()
    share = np.mean([n in sens for n in names])
    assert share == pytest.approx(frac, abs=0.03)
    assert SensitivityMix(sensitive_fraction=frac).assign(100, seed=7) == SensitivityMix(sensitive_fraction=frac).assign(100, seed=7)


def test_synergy_task_split():
    cat = catalog()
    names = SensitivityMix(mode="synergy").assign(5000, seed=2)
    tasks = [cat[n].task for n in names]
    for t, w in (("image", 0.2), ("language", 0.7), ("speech", 0.1)):
        assert tasks.count(t) / len(tasks) == pytest.approx(w, abs=0.03)


def test_bad_mix_rejected():
    with pytest.raises(ValueError):
        SensitivityMix(sensitive_fraction=1.5).assign(3, 0)
    with pytest.raises(ValueError):
        SensitivityMix(mode="synergy", task_split=(("video", 1.0),)).assign(3, 0)


def test_guided_gives_high_cpu_asks_to_sensitive_jobs(monkeypatch):
    if not (traces_dir() / ALIBABA_PODS).is_file():
        pytest.skip("alibaba-v2023 pods not found (set SENSAOPT_TRACES)")
    asks = alibaba_cpu_per_gpu()
    assert len(asks) > 5000 and asks.min() > 0
    # same mix as unguided, and the rank rule holds: record the asks the rule saw
    import sensaopt.traces.sensitivity as S

    seen = {}
    real = S.sample_cpu_asks

    def spy(n, rng):
        seen["asks"] = real(n, rng)
        return seen["asks"]

    monkeypatch.setattr(S, "sample_cpu_asks", spy)
    mix = SensitivityMix(sensitive_fraction=0.4, guided=True)
    names = mix.assign(3000, seed=5)
    sens, _ = model_classes()
    is_s = np.array([n in sens for n in names])
    assert is_s.mean() == pytest.approx(0.4, abs=0.03)
    a = seen["asks"]
    assert a[is_s].min() >= a[~is_s].max()  # every sensitive job drew at least as high an ask


def test_presets():
    for name, nodes, gpus in (("philly-8", 120, 8), ("philly-16", 60, 16), ("helios-8", 96, 8), ("helios-16", 48, 16)):
        c = preset_cluster(name)
        nt = c.node_types[0]
        assert (nt.count, nt.gpus) == (nodes, gpus)
        assert (nt.cpu_per_gpu, nt.mem_per_gpu) == (3.0, 62.5)
    ch = preset_cluster("philly-8-chronus").node_types[0]
    assert (ch.cpus, ch.mem_gb, ch.gpus) == (128, 256.0, 8)
    ch16 = preset_cluster("helios-16-chronus").node_types[0]
    assert (ch16.cpus, ch16.mem_gb) == (256, 512.0)
    custom = preset_spec("philly-16", cpu_per_gpu=4, mem_per_gpu=20)
    assert custom.cluster().node_types[0].cpus == 64 and custom.total_gpus == 960
    assert preset_cluster("3x4").total_gpus == 12
    with pytest.raises(InputError, match="unknown cluster preset"):
        preset_cluster("philly-12")
