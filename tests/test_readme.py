"""The README's code, and the code of the docs pages that took its examples, runs as written
(Python blocks from the repository root, the example instance of docs/concepts.md); the README
stays a short front page whose test command is the one CI runs."""

import json
import re
import subprocess
import sys

import pytest

from sensaopt.io import instance_from_dict

from .conftest import REPO

# pages whose Python blocks run from the repository root (docs/tour.md runs from a temporary folder: test_plot_tour.py)
PAGES = ("README.md", "docs/extending.md")


def blocks(page, lang):
    return re.findall(rf"```{lang}\n(.*?)```", (REPO / page).read_text(), flags=re.S)


PYTHON_BLOCKS = [(page, k) for page in PAGES for k in range(len(blocks(page, "python")))]


@pytest.mark.parametrize(("page", "k"), PYTHON_BLOCKS, ids=[f"{p}-{k}" for p, k in PYTHON_BLOCKS])
def test_python_blocks_run(page, k):
    # each block in its own interpreter: blocks register policies and model families
    p = subprocess.run([sys.executable, "-c", blocks(page, "python")[k]], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]


def test_the_moved_examples_are_still_there():
    # the README's tour, and its former examples on docs/extending.md: a policy, a trace from Python, a metric, a model family
    assert [len(blocks(page, "python")) for page in PAGES] == [1, 4]


def test_example_instance_loads():
    (example,) = blocks("docs/concepts.md", "json")
    inst = instance_from_dict(json.loads(example), "docs/concepts.md")
    assert [j.id for j in inst.jobs] == ["a", "b", "c"]
    assert inst.job("c").profile.speed(6, 62.5) == pytest.approx(1.6)
    from sensaopt.simulator import simulate

    assert simulate(inst, "sensascale").metrics.finished == 3


def test_readme_is_a_short_front_page_with_the_ci_command():
    readme = (REPO / "README.md").read_text()
    assert len(readme.splitlines()) <= 250
    ci = (REPO / ".ci" / "run").read_text().strip().splitlines()[-1]
    assert ci == 'python -m pip install -q -e ".[test]" && python -m pytest -q'
    assert ci in blocks("README.md", "bash")[0].splitlines()  # the README's test command is what CI runs
    for heading in ("## Install and the two commands", "## Five-minute tour", "## Headline results", "## Where to go next"):
        assert heading in readme
