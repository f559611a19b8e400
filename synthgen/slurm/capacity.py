"""Will a job ever start? Compare what it asks of a node with the nodes `sinfo` reports.

Slurm queues a job that no node can hold (8 CPUs per task on a cluster of 2-CPU nodes, GPUs on a
partition without them) and leaves it pending forever, with a reason only `squeue` shows. We ask
`sinfo` once and warn before submitting, naming the setting to change.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass

from synthgen.slurm.render import SbatchJob

_GPUS = re.compile(r"gpu(?::[^:,(]+)?:(\d+)")


@dataclass(frozen=True)
class Node:
    partitions: tuple[str, ...]
    cpus: int
    gpus: int


def parse_sinfo(text: str) -> tuple[list[Node], str | None]:
    """Nodes from `sinfo -h -N -o '%N|%P|%c|%G'` lines, and the default partition (marked `*`)."""
    by_name: dict[str, Node] = {}
    default = None
    for line in text.splitlines():
        parts = line.strip().split("|")
        if len(parts) != 4 or not parts[2].strip().isdigit():
            continue
        name, partition, cpus, gres = parts
        if partition.endswith("*"):
            partition = partition[:-1]
            default = partition
        gpus = sum(int(n) for n in _GPUS.findall(gres))
        old = by_name.get(name)
        partitions = (old.partitions if old else ()) + (partition,)
        by_name[name] = Node(partitions, int(cpus), gpus)
    return list(by_name.values()), default


def warnings_for(jobs: list[SbatchJob], nodes: list[Node], default: str | None) -> list[str]:
    """One line per job that no node (of its partition) can hold."""
    out = []
    for job in jobs:
        need = job.request
        if need is None:
            continue
        partition = need.partition or default
        fitting = [n for n in nodes if partition is None or partition in n.partitions]
        where = f"partition {partition}" if partition else "the cluster"
        if not fitting:
            out.append(f"{job.stage}: {where} has no nodes (sinfo); the job would pend forever")
            continue
        key = "train" if job.stage == "train" else ("generate" if job.stage == "generate" else "curate")
        most_cpus, most_gpus = max(n.cpus for n in fitting), max(n.gpus for n in fitting)
        for asked, most, what, limit, setting in (
            (need.cpus, most_cpus, "CPUs per task", f"the largest node of {where} has", "cpus_per_task"),
            (need.gpus, most_gpus, "GPUs per node", f"the nodes of {where} have at most", "gpus_per_node"),
            (need.nodes, len(fitting), "nodes", f"{where} has", "nodes"),
        ):
            if asked > most:
                out.append(
                    f"{job.stage}: asks for {asked} {what} but {limit} {most}; it would pend forever "
                    f"(set slurm.{key}.{setting})"
                )
    return out


def check(jobs: list[SbatchJob]) -> list[str]:
    """Warnings for `jobs` on the cluster this machine talks to; none when there is no `sinfo`."""
    if shutil.which("sinfo") is None:
        return []
    proc = subprocess.run(["sinfo", "-h", "-N", "-o", "%N|%P|%c|%G"], capture_output=True, text=True, timeout=30)
    if proc.returncode != 0:
        return []
    nodes, default = parse_sinfo(proc.stdout)
    return warnings_for(jobs, nodes, default) if nodes else []
