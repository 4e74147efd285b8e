"""The README's code runs as written (Python blocks, the example instance)."""

import json
import re
import subprocess
import sys

import pytest

from sensaopt.io import instance_from_dict

from .conftest import REPO

README = (REPO / "README.md").read_text()


def blocks(lang):
    return re.findall(rf"```{lang}\n(.*?)```", README, flags=re.S)


@pytest.mark.parametrize("k", range(len(blocks("python"))))
def test_python_blocks_run(k):
    # each block in its own interpreter: blocks register policies and model families
    p = subprocess.run([sys.executable, "-c", blocks("python")[k]], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]


def test_example_instance_loads():
    (example,) = blocks("json")
    inst = instance_from_dict(json.loads(example), "README")
    assert [j.id for j in inst.jobs] == ["a", "b", "c"]
    assert inst.job("c").profile.speed(6, 62.5) == pytest.approx(1.6)
    from sensaopt.simulator import simulate

    assert simulate(inst, "sensascale").metrics.finished == 3
