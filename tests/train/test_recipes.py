"""Recipes by model family, the learning-rate guard, and the one-line failures before training starts."""

from __future__ import annotations

import socket
import sys

import pytest

from synthgen.errors import UserError
from synthgen.train.recipe import load_recipe, recipe_names, require_learning_rate

# The paper's Appendix E, transcribed independently of recipes/: (learning rate, warm-up steps).
FAMILIES = {
    "qwen3-8b-base": (1.4e-7, 800),
    "llama3.1-8b-instruct": (6e-8, 800),
    "qwen2.5-32b-base": (6e-8, 400),
}


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_each_paper_model_family_resolves_to_its_rate_and_warmup(name, tmp_path):
    pytest.importorskip("trl")
    from synthgen.train.recipe import build_grpo_config, is_on_policy

    lr, warmup = FAMILIES[name]
    recipe = load_recipe(name)
    args = build_grpo_config(
        recipe, {"output_dir": str(tmp_path), "max_steps": 40000, "use_vllm": False, "bf16": False}
    )
    assert args.learning_rate == pytest.approx(lr) and args.warmup_steps == warmup
    assert args.lr_scheduler_type == "constant_with_warmup"  # linear warm-up, then constant
    assert (args.num_generations, args.beta, args.scale_rewards) == (8, 0.0, "none")
    assert (args.epsilon, args.epsilon_high, args.temperature) == (0.2, 0.25, 1.0)
    assert not is_on_policy(args)  # the epsilon clip can act
    assert recipe["model_name_or_path"]


def test_recipes_by_name_or_path_and_their_errors(tmp_path):
    assert {"grpo-paper", "tiny-cpu", *FAMILIES} <= set(recipe_names())
    assert load_recipe("tiny-cpu")["learning_rate"] == pytest.approx(1e-5)  # sets its own
    (tmp_path / "mine.yaml").write_text("extends: qwen3-8b-base\nlearning_rate: 1.0e-7\n")
    mine = load_recipe(str(tmp_path / "mine.yaml"))
    assert mine["learning_rate"] == pytest.approx(1e-7) and mine["warmup_steps"] == 800 and mine["beta"] == 0.0
    (tmp_path / "loop.yaml").write_text("extends: loop.yaml\n")
    with pytest.raises(UserError, match="extends itself"):
        load_recipe(str(tmp_path / "loop.yaml"))
    with pytest.raises(UserError, match="named recipes: .*qwen3-8b-base"):
        load_recipe("qwen4-base")


def test_no_learning_rate_is_refused_not_defaulted(tmp_path):
    with pytest.raises(UserError, match="no learning rate"):
        require_learning_rate(load_recipe("grpo-paper"), None, "recipe grpo-paper")
    assert require_learning_rate(load_recipe("grpo-paper"), 3e-7, "x") == pytest.approx(3e-7)
    (tmp_path / "short.yaml").write_text("learning_rate: 6e-8\n")  # YAML 1.1 reads this as a string
    assert require_learning_rate(load_recipe(str(tmp_path / "short.yaml")), None, "x") == pytest.approx(6e-8)
    (tmp_path / "bad.yaml").write_text("learning_rate: fast\n")
    with pytest.raises(UserError, match="must be a number"):
        require_learning_rate(load_recipe(str(tmp_path / "bad.yaml")), None, "x")


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


@pytest.fixture
def no_network(monkeypatch):
    """Any connection attempt fails the test (the Hub must not be asked)."""
    attempts = []

    def refuse(*args, **kwargs):
        attempts.append(args)
        raise OSError("network used in a test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    return attempts


def test_cli_without_a_learning_rate_exits_2(cli, binned_dir, tiny_model, tmp_path):
    for extra in ([], ["--recipe", "grpo-paper"]):
        rc, _, err = cli(
            "train",
            "--data",
            str(binned_dir),
            "--model",
            str(tiny_model),
            "--output",
            str(tmp_path / "o"),
            "--max-steps",
            "1",
            *extra,
        )
        assert rc == 2 and "no learning rate" in one_line(err) and "--learning-rate" in err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("model", ["{tmp}/no-such-model", "models/no-such-model", "./gone", "Org/NotCached"])
def test_cli_missing_model_exits_2_without_the_network(cli, binned_dir, tmp_path, monkeypatch, no_network, model):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "models").mkdir()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    rc, _, err = cli(
        "train",
        "--data",
        str(binned_dir),
        "--model",
        model.format(tmp=tmp_path),
        "--recipe",
        "tiny-cpu",
        "--output",
        str(tmp_path / "o"),
        "--max-steps",
        "1",
    )
    assert rc == 2 and "--model" in one_line(err) and no_network == []


def test_cli_without_the_train_extra_says_what_to_install(cli, binned_dir, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "trl", None)  # as if TRL were not installed: importing it fails
    rc, _, err = cli("train", "--data", str(binned_dir), "--model", "m", "--recipe", "tiny-cpu")
    assert rc == 2 and "install synthgen[train]" in one_line(err) and "trl" in err
    rc, _, err = cli("train", "--make-tiny-model", str(tmp_path / "m"))
    assert rc == 2 and "synthgen[train]" in err


def test_quiet_filters_library_noise_and_keeps_real_warnings():
    pytest.importorskip("transformers")
    import warnings

    from synthgen.train.quiet import quiet_libraries

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        quiet_libraries()
        notice = "`is_gradient_checkpointing` is deprecated and will be removed in v6."
        warnings.warn(notice, FutureWarning, stacklevel=1)
        warnings.warn("the reward is NaN for 3 completions", UserWarning, stacklevel=1)
        warnings.warn("x is deprecated", FutureWarning, stacklevel=1)
    assert [str(w.message) for w in seen] == ["the reward is NaN for 3 completions", "x is deprecated"]


def test_every_grpo_flag_but_the_async_ones_reaches_grpo_config_by_its_name():
    """A new flag in the GRPO --help panel must be added to GRPO_KEYS (or said to be AsyncGRPOConfig's)."""
    from synthgen.settings.base import cli_spec
    from synthgen.train.run import GRPO_KEYS
    from synthgen.train.settings import GRPO, TrainSettings

    panel = {n for n, info in TrainSettings.model_fields.items() if cli_spec(info).get("panel") == GRPO}
    assert set(GRPO_KEYS) == panel - {"async_grpo", "max_staleness"} | {"seed"}
