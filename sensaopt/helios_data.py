"""The Helios files made from HeliosData's ``data.zip`` (commit 159f0ca), as HeliosArtifact makes them.

The zip holds ``data/<Cluster>/cluster_log.csv`` (one row per Slurm job: ``job_id, user,
vc, gpu_num, cpu_num, node_num, state, submit_time, start_time, end_time, duration,
queue``; times ``YYYY-MM-DD HH:MM:SS``, ``duration`` and ``queue`` in seconds) and
``data/<Cluster>/cluster_gpu_number.csv`` (GPUs per VC per day: ``date, vc..., total``)
for Venus, Earth, Saturn and Uranus. :func:`derive` runs one recipe of
:attr:`sensaopt.datasets.DataFile.derived`:

* ``member:PATH``: that member extracted as it is;
* ``throughput:Cluster``: HeliosArtifact ``analysis/trace_parser.py`` ``parse_throughput``:
  per 10-minute bin from 2020-04-01 00:00 to 2020-09-28 23:50 (bin = [t, t + 10 min)),
  the jobs submitted / started / ended (all, GPU jobs, their GPUs);
* ``vc-config:Cluster``: HeliosArtifact ``framework/QSSF Service/data/vc_dict_generator.py``
  (``-d Sept``): each VC's GPUs on the cluster's reference day divided by 8 (nodes,
  floored), minus the VCs that script drops, as a ``,num`` CSV.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

THROUGHPUT_RANGE = ("2020-04-01 00:00:00", "2020-09-28 23:50:00")
THROUGHPUT_KINDS = ("submit", "start", "end")
VC_DAY = {"Venus": "2020-09-10", "Earth": "2020-09-10", "Uranus": "2020-09-10", "Saturn": "2020-09-01"}
VC_DROPPED = {  # vc_dict_generator.py's `del dic[...]` (zero nodes, test VCs, merged VCs)
    "Venus": ("vcEhP", "vcIya", "vcJLV", "vcJkd", "vcsBT", "vcbIW", "vc6YE", "vcOhe", "vccJW", "vcP2J"),
    "Earth": ("vcp4O", "vcvcM", "vcXrB", "vc7hD", "vcIya", "vc8Sj", "vcLJZ", "vcxS0"),
    "Saturn": ("vc7Bz", "vcHcQ", "vck1d", "vcj72", "vcIya", "vcygX", "vcxqr", "vcsgw"),
    "Uranus": ("vc7Bz", "vczGr", "vciN1", "vcV7h", "vcRAl", "vcvcM", "vc1z2", "vcHyk", "vcRDh", "vcFsC", "vcVvI", "vcxqr",
               "vcsBT", "vcygX"),
}


def derive(recipe: str, source: Path, out: Path) -> None:
    """Write what ``recipe`` makes from the zip ``source`` to ``out``; ValueError naming what
    is wrong (not a zip, a member or column missing)."""
    kind, _, arg = recipe.partition(":")
    try:
        with zipfile.ZipFile(source) as zf:
            if kind == "member":
                _extract(zf, arg, out)
            elif kind == "throughput":
                out.write_text(throughput_csv(zf, arg))
            elif kind == "vc-config":
                out.write_text(vc_config_csv(zf, arg))
            else:
                raise ValueError(f"unknown recipe {recipe!r}")
    except zipfile.BadZipFile as e:
        raise ValueError(f"not a zip file ({e})") from None


def _member(zf: zipfile.ZipFile, name: str) -> zipfile.ZipInfo:
    try:
        return zf.getinfo(name)
    except KeyError:
        raise ValueError(f"the zip has no {name}") from None


def _extract(zf: zipfile.ZipFile, name: str, out: Path) -> None:
    with zf.open(_member(zf, name)) as src, out.open("wb") as dst:
        for block in iter(lambda: src.read(1 << 20), b""):
            dst.write(block)


def throughput_csv(zf: zipfile.ZipFile, cluster: str) -> str:
    """``<Cluster>_cluster_throughput.csv``: ``time`` then ``{submit,start,end}_job_all``,
    ``..._gpu_job``, ``..._gpu_num`` per 10-minute bin (counts; GPUs)."""
    import pandas as pd

    with zf.open(_member(zf, f"data/{cluster}/cluster_log.csv")) as fh:
        log = pd.read_csv(fh, usecols=["gpu_num", *(f"{k}_time" for k in THROUGHPUT_KINDS)])
    index = pd.date_range(*THROUGHPUT_RANGE, freq="10min", name="time")
    cols: dict[str, pd.Series] = {}
    for k in THROUGHPUT_KINDS:
        t = pd.to_datetime(log[f"{k}_time"], format="%Y-%m-%d %H:%M:%S", errors="coerce")
        frame = pd.DataFrame({"bin": t.dt.floor("10min"), "gpu": log["gpu_num"], "is_gpu": (log["gpu_num"] != 0).astype(int)})
        g = frame.dropna(subset=["bin"]).groupby("bin")
        cols[f"{k}_job_all"] = g.size()
        cols[f"{k}_gpu_job"] = g["is_gpu"].sum()
        cols[f"{k}_gpu_num"] = g["gpu"].sum()
    order = [f"{k}_{what}" for what in ("job_all", "gpu_job", "gpu_num") for k in THROUGHPUT_KINDS]
    df = pd.DataFrame({c: cols[c].reindex(index, fill_value=0).astype("int64") for c in order}, index=index)
    return str(df.to_csv(lineterminator="\n"))


def vc_config_csv(zf: zipfile.ZipFile, cluster: str) -> str:
    """``<Cluster>_vc_config.csv``: ``,num`` then one ``vc,nodes`` row per VC kept (8 GPUs a node)."""
    import pandas as pd

    if cluster not in VC_DAY:
        raise ValueError(f"no VC recipe for {cluster!r} (known: {', '.join(VC_DAY)})")
    with zf.open(_member(zf, f"data/{cluster}/cluster_gpu_number.csv")) as fh:
        df = pd.read_csv(fh, parse_dates=["date"])
    day = df[df["date"] == pd.Timestamp(VC_DAY[cluster])]
    if day.empty:
        raise ValueError(f"data/{cluster}/cluster_gpu_number.csv has no row for {VC_DAY[cluster]}")
    vcs = list(df.columns[1:-1])  # between `date` and `total`
    nodes = {vc: int(n) // 8 for vc, n in zip(vcs, day.iloc[0][vcs], strict=True)}
    for vc in VC_DROPPED[cluster]:
        nodes.pop(vc, None)
    return str(pd.DataFrame.from_dict(nodes, orient="index", columns=["num"]).to_csv(lineterminator="\n"))
