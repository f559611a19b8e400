"""A tiny random Qwen2-style model and a byte-level BPE tokenizer, built on the spot, offline.

Tests, the demo and the README run `synthgen train` end to end on a CPU with it, downloading
nothing: `synthgen train --make-tiny-model DIR` writes a folder that `--model DIR` loads like any
Hugging Face checkpoint. The model is random, so rewards are 0: it exercises the pipeline only.

    from synthgen.train.tiny import make_tiny_model
    make_tiny_model("data/tiny-model")
"""

from __future__ import annotations

import json
from pathlib import Path

# Written beside the weights so that `synthgen train --model DIR` can say what a reward of 0 means.
MARKER = "synthgen-tiny-model.json"

# A ChatML-style template, written for this project: every message is framed by start/end
# markers with its role, and a generation prompt opens the assistant's turn.
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]

# Training text for the tokenizer: Python and prose fragments like the prompts it will see.
_CORPUS = [
    "def f(x):\n    return [v * 2 for v in x if v % 3 != 0]\n",
    "def f(s, k):\n    out = ''\n    for ch in s:\n        out += chr((ord(ch) + k) % 128)\n    return out\n",
    "Write a function f that reproduces the outputs below. Inputs and outputs:\n",
    "```python\ndef f(a, b):\n    return sorted(set(a) & set(b))\n```\n",
    "```input\n[1, 2, 3], 'abc', {'k': 4}, (5, 6), None, True, False, 3.5\n```\n",
    "Find an input such that f returns the given output. Give the output of f on this input.",
    "The quick brown fox jumps over the lazy dog. 0123456789 +-*/%=<>!&|^~()[]{}:;,.'\"#\n",
]


def build_tokenizer(vocab_size: int = 384, context: int = 2048):
    """A byte-level BPE tokenizer trained in-process, wrapped for transformers, with a chat template."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    core = Tokenizer(models.BPE(unk_token=None))
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS,
        # Every byte is in the alphabet, so any text (model noise included) round-trips.
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    core.train_from_iterator(_CORPUS * 4, trainer=trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=core,
        bos_token=None,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        chat_template=CHAT_TEMPLATE,
        model_max_length=context,
    )


def make_tiny_model(
    path: str | Path, *, hidden_size: int = 64, layers: int = 2, seed: int = 0, context: int = 2048
) -> Path:
    """Write a random tiny Qwen2ForCausalLM and its tokenizer to `path`; return the path.

    Four attention heads: hidden_size 256 gives head_dim 64, which vLLM's CPU attention kernels
    need (they refuse 16). `context` is the longest prompt plus answer, in tokens."""
    import torch
    from transformers import GenerationConfig, Qwen2Config, Qwen2ForCausalLM

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    tokenizer = build_tokenizer(context=context)
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=hidden_size * 2,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=context,
        tie_word_embeddings=True,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=None,
    )
    # Seed a private generator state so that the same call writes the same weights.
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = Qwen2ForCausalLM(config)
    model.generation_config = GenerationConfig(
        eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id, do_sample=True
    )
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    marker = {"made_by": "synthgen train --make-tiny-model", "random": True, "note": "never solves a problem"}
    (path / MARKER).write_text(json.dumps(marker) + "\n", encoding="utf-8")
    return path


def is_tiny(model: str | Path | None) -> bool:
    """Whether `model` is a folder of a tiny model: written by make_tiny_model, or a checkpoint of one
    (save_pretrained does not carry the marker over, so a config this small counts too)."""
    if not model:
        return False
    folder = Path(model).expanduser()
    if (folder / MARKER).is_file():
        return True
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    hidden, layers = config.get("hidden_size"), config.get("num_hidden_layers")
    return isinstance(hidden, int) and isinstance(layers, int) and hidden <= 256 and layers <= 4
