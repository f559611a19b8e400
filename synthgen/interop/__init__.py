"""synthgen's problems, rewards and curricula for trainers other than `synthgen train`.

A researcher who trains with verl, verifiers (prime-rl), OpenRLHF or a plain TRL script gets the
same three things `synthgen train` uses, behind public names:

* **the problems** (`synthgen export --format verl|verifiers|trl|sft`): each row carries the
  student prompt exactly as synthgen renders it (`records.student_prompt`), the ground truth
  needed to verify an answer (`records.ground_truth`, one JSON string), and the measurement
  (pass rate, its interval, `measured_by`, bin, chain, mutation score) in the format's metadata
  field;
* **the reward** (`scorer.score`): the environments' own verifiers in synthgen's sandbox, one
  pool per process started on first use and closed at exit; model-written code never runs in the
  trainer's process. Trainer-shaped entry points: `synthgen.interop.verl.compute_score`,
  `synthgen.interop.trl.reward`, `synthgen.interop.verifiers.load_environment`;
* **the curricula** (`synthgen.interop.curriculum`): a schedule as a plain iterable of dataset
  indices, and as verl's `data.sampler` class.

Importing this package imports nothing heavy; each trainer's library is imported only by its own
module.
"""
