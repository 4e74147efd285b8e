"""The full Philly SLO trace (30,940 rows, 30,735 GPU jobs), every policy, every
schedule validated by the simulator (it raises on an invalid one). Slow."""

import pytest

from sensaopt.policies import policy_names
from sensaopt.traces.paths import CHRONUS_TRACES, traces_dir

pytestmark = pytest.mark.slow


# rolling-cpsat / rolling-milp solve an exact window model every round: at 960 GPUs and
# ~5,000 rounds that is hours of solver time per run; they are tested on small instances.
@pytest.mark.parametrize("policy", [p for p in policy_names() if not p.startswith("rolling")])
def test_full_slo_trace(policy):
    if not (traces_dir() / CHRONUS_TRACES["chronus-slo"]).is_file():
        pytest.skip("Chronus traces not found (set SENSAOPT_TRACES)")
    from sensaopt.traces.run import run_policy
    from sensaopt.traces.sources import make_instance

    inst, data = make_instance("chronus-slo", "philly-8")
    assert len(inst.jobs) == 30735 and data.skipped["no_gpu"] == 205
    res, ev = run_policy(inst, policy)
    assert ev.ok and res.metrics.finished == len(inst.jobs)
