"""Benchmark: the optimizer step time of `train --async` against the synchronous GRPO trainer, on one GPU.

    python bench/train_async.py --model DIR              # DIR: a local chat model, e.g. Qwen2.5-0.5B-Instruct
    python bench/train_async.py --model DIR --steps 12 --completion-length 512

Needs a CUDA GPU, vllm, TRL's asynchronous GRPO (trl.experimental.async_grpo) and the flash
attention kernel its loss runs on (kernels-community/flash-attn3, through the `kernels` package,
in the local Hugging Face cache on an offline machine); without one of them it says which on one
line and exits 2. Same data (deduction problems written on the spot, binned easy..hard), same
recipe (G = 8, 16 completions a step, the paper's clip and schedule), same curriculum
(reverse-medium), same sandboxed reward, for `--steps` optimizer steps each:
  1. sync:  `synthgen train` (TRL's GRPOTrainer, vLLM colocated on the training GPU);
  2. async: `vllm serve DIR` started here on the same GPU (NCCL weight transfer), then
     `synthgen train --async` against it (generation runs ahead of the updates, <= --max-staleness).
The figure is each run's median step time after `--warmup` steps (the synchronous trainer's
logged `step_time`, the async trainer's `perf/step_s`, both wall time per optimizer step); the
last line is the ratio sync / async, and the exit is 1 when it is below `--target` (1.0).
Not measured yet: no GPU machine was available when this was written.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

BINS = ("easy", "easy_medium", "medium", "hard")


def missing_runtime() -> str | None:
    """Why this machine cannot run the bench, or None."""
    import torch

    if not torch.cuda.is_available():
        return "no CUDA GPU"
    for name in ("vllm", "requests", "aiohttp", "kernels"):
        if importlib.util.find_spec(name) is None:
            return f"the {name} package is not installed"
    if importlib.util.find_spec("trl.experimental.async_grpo") is None:
        return "the installed TRL has no trl.experimental.async_grpo"
    try:
        from kernels import get_kernel

        get_kernel("kernels-community/flash-attn3", version=1)
    except Exception as exc:  # offline and not cached, or no Hopper-class GPU
        return f"TRL's async loss needs the kernels-community/flash-attn3 kernel: {str(exc).splitlines()[0]}"
    return None


def write_data(root: Path, per_bin: int = 32) -> Path:
    """Binned deduction problems `f(x) = x * k + c`, as the bin stage lays them out."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from synthgen.sandbox.values import encode
    from synthgen.store import records

    schema = records.with_fields(records.PROBLEMS, [pa.field("difficulty", pa.string(), nullable=False)])
    counts = dict(mode="multi", turn=1, valid=True, reason="ok", pass_rate=0.5, attempts=32, scored=32, correct=16)
    counts |= dict(format_failures=0, infra_failures=0, teacher_tokens_in=1, teacher_tokens_out=1)
    counts |= dict(student_tokens_in=1, student_tokens_out=1, teacher_model="t", student_model="s", settings_hash="b")
    for level, b in enumerate(BINS):
        rows = []
        for i in range(per_bin):
            k, c = level * 7 + 3, i * 13 % 17
            code = f"def f(x):\n    return x * {k} + {c}\n"
            inputs = [str(i + 2)]
            pid = records.problem_id("deduction", code, inputs, "")
            rows.append(
                dict(counts, turn_id=f"{b}/{i}", problem_id=pid, seed_id="seed", lineage_id=f"{b}-{i}", env="deduction")
                | dict(code=code, inputs=inputs, outputs=[encode((i + 2) * k + c)], difficulty=b)
            )
        folder = root / "bin" / b
        folder.mkdir(parents=True, exist_ok=True)
        pq.write_table(records.table_from_rows(rows, schema), folder / "part-00000.parquet")
    return root / "bin"


def write_recipes(root: Path, completion_length: int) -> tuple[Path, Path]:
    common = (
        "extends: grpo-paper\n"
        "learning_rate: 1.0e-6\nwarmup_steps: 0\nper_device_train_batch_size: 16\ngradient_accumulation_steps: 1\n"
        f"max_completion_length: {completion_length}\nlogging_steps: 1\nsave_steps: 100000\nreport_to: none\n"
        "bf16: true\n"
    )
    sync = root / "sync.yaml"
    sync.write_text(common + "use_vllm: true\nvllm_mode: colocate\nvllm_gpu_memory_utilization: 0.3\n", "utf-8")
    asyn = root / "async.yaml"
    asyn.write_text(common + "dtype: bfloat16\n", "utf-8")  # as the server serves
    return sync, asyn


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(model: str, port: int, log: Path) -> subprocess.Popen:
    env = dict(os.environ, VLLM_SERVER_DEV_MODE="1", HF_HUB_OFFLINE="1")
    cmd = [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", model, "--port", str(port)]
    cmd += ["--host", "127.0.0.1", "--dtype", "bfloat16", "--gpu-memory-utilization", "0.35", "--max-model-len", "4096"]
    cmd += ["--weight-transfer-config", '{"backend":"nccl"}']
    return subprocess.Popen(cmd, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT, start_new_session=True)


def wait_ready(port: int, server: subprocess.Popen, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"the vLLM server exited ({server.returncode}) before it was ready")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5):
                return
        except OSError:
            time.sleep(2)
    raise RuntimeError(f"the vLLM server was not ready after {timeout:.0f} s")


def train(args: list[str], out: Path) -> None:
    cmd = [sys.executable, "-m", "synthgen", "train", *args, "--output", str(out)]
    subprocess.run(cmd, check=True, env=dict(os.environ, HF_HUB_OFFLINE="1"))


def median_step(out: Path, key: str, warmup: int) -> tuple[float, int]:
    values = []
    for line in (out / "trainer_log.jsonl").read_text("utf-8").splitlines():
        entry = json.loads(line)
        if isinstance(entry.get(key), (int, float)) and entry["step"] > warmup:
            values.append(float(entry[key]))
    if not values:
        raise RuntimeError(f"{out}: no {key!r} logged after step {warmup}")
    return statistics.median(values), len(values)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", help="a local chat model folder (vLLM serves it; the trainers load it)")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2, help="steps left out of the median")
    ap.add_argument("--completion-length", type=int, default=256)
    ap.add_argument("--max-staleness", type=int, default=2)
    ap.add_argument("--server-timeout", type=float, default=600)
    ap.add_argument("--target", type=float, default=1.0, help="exit 1 when sync / async is below this")
    ap.add_argument("--keep", action="store_true", help="keep the work folder")
    a = ap.parse_args()
    why = missing_runtime()
    if why is None and not (a.model and (Path(a.model) / "config.json").is_file()):
        why = "--model must name a local model folder (with config.json)"
    if why is None:
        from synthgen.train.async_run import chat_template_problem

        why = chat_template_problem(a.model)
    if why:
        print(f"bench/train_async.py cannot run here: {why}", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="bench-train-async-"))
    server = None
    try:
        data = write_data(work)
        sync_recipe, async_recipe = write_recipes(work, a.completion_length)
        common = ["--data", str(data), "--model", a.model, "--curriculum", "reverse-medium"]
        common += ["--max-steps", str(a.steps), "--seed", "0"]
        t0 = time.monotonic()
        train([*common, "--recipe", str(sync_recipe)], work / "sync")
        sync_wall = time.monotonic() - t0
        port = free_port()
        server = start_server(a.model, port, work / "vllm.log")
        wait_ready(port, server, a.server_timeout)
        t0 = time.monotonic()
        url = f"http://127.0.0.1:{port}"
        asyn = [*common, "--recipe", str(async_recipe), "--async", "--vllm-server-url", url]
        train([*asyn, "--max-staleness", str(a.max_staleness)], work / "async")
        async_wall = time.monotonic() - t0
        sync_s, n_sync = median_step(work / "sync", "step_time", a.warmup)
        async_s, n_async = median_step(work / "async", "perf/step_s", a.warmup)
    except (subprocess.CalledProcessError, RuntimeError) as exc:
        print(f"bench/train_async.py failed: {exc}", file=sys.stderr)
        return 3
    finally:
        if server is not None and server.poll() is None:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=60)
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
    ratio = sync_s / async_s
    print(
        f"sync  (GRPOTrainer, vLLM colocated): median step {sync_s:.3f} s over {n_sync} steps, {sync_wall:.0f} s in all"
    )
    print(
        f"async (AsyncGRPOTrainer, vLLM server): median step {async_s:.3f} s over {n_async} steps, {async_wall:.0f} s"
    )
    print(f"ratio sync/async step time: {ratio:.2f}x (target >= {a.target:.2f}x)")
    return 0 if ratio >= a.target else 1


if __name__ == "__main__":
    sys.exit(main())
