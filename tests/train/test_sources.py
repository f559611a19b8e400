"""Weighted data sources, their mix, held-out splits and the per-environment budget (fast, no torch)."""

from __future__ import annotations

import random

import pytest

from synthgen.errors import UserError
from synthgen.train.curriculum import SourceMix, get_schedule, schedule_from_dict
from synthgen.train.selection import counts, parse_sources, per_env_budget, source_weights, split_heldout
from tests.helpers.train import deduction_rows, write_binned

CHI2_1DOF_P001 = 10.83


def test_named_weighted_sources_and_a_plain_folder(tmp_path):
    real, synth = tmp_path / "real", tmp_path / "synth"
    specs = parse_sources([f"real={real}:0.55", f"synth={synth}:0.45"])
    assert [(s.name, s.paths, s.weight) for s in specs] == [
        ("real", (str(real),), 0.55),
        ("synth", (str(synth),), 0.45),
    ]
    assert source_weights(specs) == pytest.approx({"real": 0.55, "synth": 0.45})
    synth.mkdir()
    plain = parse_sources([str(synth), str(real)])  # no weights: one pooled source, as before
    assert [s.name for s in plain] == ["data"] and source_weights(plain) is None
    assert parse_sources([f"{synth}:3", f"x={real}:1"])[0].name == "synth"


def test_sources_from_a_yaml_file(tmp_path):
    (tmp_path / "mix.yaml").write_text(
        "sources:\n  - {name: real, path: real, weight: 55}\n  - {name: synth, path: [a, b], weight: 45}\n"
    )
    specs = parse_sources([str(tmp_path / "mix.yaml")])
    assert specs[1].paths == (str(tmp_path / "a"), str(tmp_path / "b"))  # relative to the file
    assert source_weights(specs) == pytest.approx({"real": 0.55, "synth": 0.45})


@pytest.mark.parametrize(
    "entries, message",
    [
        (["real=/r:0.5", "/s"], "every source a weight or none"),
        (["real=/r:0", "synth=/s:1"], "above 0"),
        (["real=/r:1", "real=/r2:2"], "two weights"),
    ],
)
def test_bad_source_lists_are_user_errors(entries, message):
    with pytest.raises(UserError, match=message):
        parse_sources(entries)


def draw_sources(mix: SourceMix, bin_weights: dict, n: int = 20000) -> tuple[dict, dict]:
    """n draws by the mix's stratum weights: counts per source and per stratum."""
    weights = mix.weights(bin_weights)
    keys = sorted(weights)
    drawn = random.Random(0).choices(keys, weights=[weights[k] for k in keys], k=n)
    per_source: dict[str, int] = {}
    per_stratum: dict[str, int] = {}
    for k in drawn:
        per_source[mix.source_of(k)] = per_source.get(mix.source_of(k), 0) + 1
        per_stratum[k] = per_stratum.get(k, 0) + 1
    return per_source, per_stratum


def test_the_mix_keeps_the_source_weights_whatever_the_source_sizes():
    # 25K real problems in one folder against 20K synthetic ones over three bins (the paper's REAL + SYNTH).
    sources = ["real"] * 2500 + ["synth"] * 2000
    bins = ["real"] * 2500 + ["easy"] * 1000 + ["medium"] * 700 + ["hard"] * 300
    mix = SourceMix(sources, bins, {"real": 0.55, "synth": 0.45}, scope={"synth"})
    per_source, per_stratum = draw_sources(mix, get_schedule("medium-only").weights_at(0))
    n = sum(per_source.values())
    chi2 = sum((per_source[s] - n * p) ** 2 / (n * p) for s, p in (("real", 0.55), ("synth", 0.45)))
    assert chi2 < CHI2_1DOF_P001
    # The curriculum acts inside the synthetic part only: medium-only leaves nothing else of synth.
    assert set(per_stratum) == {"real/real", "synth/medium"}


def test_curriculum_across_all_sources_and_uniform_inside_the_others():
    sources = ["real"] * 60 + ["synth"] * 40
    bins = ["easy"] * 50 + ["hard"] * 10 + ["easy"] * 20 + ["hard"] * 20
    everywhere = SourceMix(sources, bins, {"real": 0.5, "synth": 0.5})
    hard_only = schedule_from_dict({"steps": {0: {"hard": 1}}}).weights_at(0)
    assert everywhere.weights(hard_only) == pytest.approx({"real/hard": 0.5, "synth/hard": 0.5})
    scoped = SourceMix(sources, bins, {"real": 0.5, "synth": 0.5}, scope={"synth"})
    # real is drawn uniformly over its problems: 50 easy, 10 hard.
    assert scoped.weights(hard_only) == pytest.approx(
        {"real/easy": 0.5 * 50 / 60, "real/hard": 0.5 * 10 / 60, "synth/hard": 0.5}
    )
    pooled = SourceMix(sources, bins)  # no weights: strata are the bins, as before sources existed
    assert pooled.strata[0] == "easy" and pooled.weights(get_schedule("uniform").weights_at(0)) == pytest.approx(
        {"easy": 0.7, "hard": 0.3}
    )


def env_rows(sizes: dict[str, int]) -> list[dict]:
    rows = []
    for env, n in sizes.items():
        for i in range(n):
            rows.append({"problem_id": f"{env}-{i}", "env": env, "difficulty": ("easy", "medium", "hard")[i % 3]})
    return rows


def test_per_env_selects_equal_counts_per_environment():
    rows = env_rows({"induction": 90, "abduction": 40, "deduction": 55, "fuzzing": 31})
    chosen = per_env_budget(rows, 30, seed=0)
    assert counts(chosen, "env") == {"abduction": 30, "deduction": 30, "fuzzing": 30, "induction": 30}
    assert {r["problem_id"] for r in chosen} <= {r["problem_id"] for r in per_env_budget(rows, 31, seed=0)}
    assert chosen != per_env_budget(rows, 30, seed=1)
    with pytest.raises(UserError, match="fuzzing \\(31\\)"):
        per_env_budget(rows, 40, seed=0)


def test_heldout_fraction_is_per_bin_and_out_of_training():
    rows = env_rows({"deduction": 30})
    train, held = split_heldout(rows, 0.2, seed=0)
    assert counts(held, "difficulty") == {"easy": 2, "hard": 2, "medium": 2}
    assert not {r["problem_id"] for r in train} & {r["problem_id"] for r in held} and len(train) == 24


def test_plan_applies_envs_heldout_and_budget_in_order(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from synthgen.store import records
    from synthgen.train.selection import select_data
    from synthgen.train.settings import TrainSettings

    schema = records.with_fields(records.PROBLEMS, [pa.field("difficulty", pa.string(), nullable=False)])
    folder = tmp_path / "mixed" / "easy"
    folder.mkdir(parents=True)
    rows = []
    for env in ("induction", "deduction"):
        for r in deduction_rows("easy", 6):
            r = {**r, "env": env, "problem_id": f"{env}-{r['problem_id']}"}
            rows.append(r)
    pq.write_table(records.table_from_rows(rows, schema), folder / "part-0.parquet")
    synth = write_binned(tmp_path / "s", bins=("easy", "hard"), n=4)
    plan = select_data(
        TrainSettings(
            data=[f"real={tmp_path / 'mixed'}:1", f"synth={synth}:1"],
            per_env=3,
            eval={"heldout_fraction": 0.25},
            curriculum_sources=["synth"],
        )
    )
    assert counts(plan.rows, "env") == {"deduction": 3, "induction": 3}
    assert set(plan.heldout) == {"easy", "hard"} and plan.curriculum_sources == {"synth"}
    assert not {r["problem_id"] for r in plan.rows} & {r["problem_id"] for s in plan.heldout.values() for r in s}
    only = select_data(TrainSettings(data=[str(tmp_path / "mixed")], envs=["induction"]))
    assert counts(only.rows, "env") == {"induction": 6}
    with pytest.raises(UserError, match="--curriculum-sources needs weighted sources"):
        select_data(TrainSettings(data=[str(synth)], curriculum_sources=["synth"]))
