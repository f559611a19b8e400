"""The only place model-written code runs: one zygote per worker, a fresh child per job.

    from synthgen.sandbox import SandboxPool, Job, values
    with SandboxPool() as pool:
        r = pool.run_sync(Job("def f(x):\n    return x + 1\n", ("f(1)", "f('a')"),
                              expected=(values.from_literal("2"), None)))
        r.isolation                    # "bwrap" or "rlimits-only"
        r.calls[0].status, r.calls[0].match, r.calls[1].error   # ok True "TypeError: ..."
        p = pool.run_sync(Job.program("print(int(input()) * 2)", "21\n"))   # a script on stdin
        p.calls[0].status, p.calls[0].value                      # ok "42\n" (its whole stdout)

Design: per worker, bubblewrap runs a zygote (zygote.py) that never receives job data; the host
(pool.py) writes each job into a memory file and sends the zygote only descriptors over one
socket; the zygote forks the job's child (child.py), which reads its own job, and reports how it
ended; the host reads the child's result records and output, and judges (results.py, verdicts.py,
values.py; contest_runner.py runs a sample's contest tests with LiveCodeBench's semantics).
isolation.py starts workers and says which levels exist: "bwrap", and "rlimits-only", a
development fallback that isolates nothing, refused unless allow_unsafe=True.

Threat model: the code under test is hostile and may do anything Python can. At "bwrap":
  * The host is untouched: the sandbox runs as uid 65534 without capabilities on the host, with an
    empty environment, no network (a listener on the host's 127.0.0.1 is unreachable), its own
    pid namespace, and only /usr and its own folder mounted, read-only. Each job gets a fresh,
    size-capped tmpfs /tmp as working directory and fresh IPC and user namespaces.
  * No job sees another job's data: each child is forked from the zygote, which has held nothing
    of any job (no code, calls, results or output, nor the teacher's validation run of the same
    problem), and the child inherits only its own pipes and job file. A job reading its memory,
    live objects, stack, environment or files finds nothing of another's (tests/sandbox/
    test_job_isolation.py); the zygote is not dumpable, and ptrace and process_vm_readv are
    refused by seccomp.
  * Jobs cannot touch each other or the zygote: each child is pid 1 of its own pid namespace, and
    it exits after its job. Where a job kills its zygote anyway (only at "rlimits-only"), its
    result is `infra` and the worker is replaced.
  * Less kernel to attack: no capabilities, no_new_privs, and a seccomp deny-list (x86-64, aarch64:
    mount, namespaces, keyrings, ptrace, bpf, io_uring, perf, modules...). Threads may start; new
    processes may not (fork, vfork, clone without CLONE_THREAD fail).
  * Resources are bounded: wall clock (SIGKILL of the child's pid namespace), CPU time, address
    space, file size, open files, no core dumps, and output and result sizes (over a cap a job
    gets `output_too_large`). Program jobs get the same, their input an in-memory file.
  * Verdicts are honest: expected values never enter the sandbox; the child returns canonical,
    type-tagged encodings that the host decodes without evaluating and compares type-strictly,
    so a forged record can at most claim a value, which still has to equal the hidden one.
    Timeout, killed and infra come only from what the zygote and host saw from outside; `infra`
    (the sandbox failed) is never reported as a wrong answer.

Not covered: kernel exploits (namespaces, not a VM; the seccomp list is a deny-list); reading
world-readable files under /usr; side channels and denial of service beyond the limits above
(workers x memory_mb must fit in RAM; tmpfs /tmp counts towards it); HumanEval (evaluation only,
never a reward) runs the benchmark's own test code, holding its expected values, beside the
answer, as its harness does; code that needs subprocesses, the network or site-packages other than
the libraries the settings name (`sandbox.libraries`, numpy by default) fails, honestly.
"""

from synthgen.sandbox import values
from synthgen.sandbox.isolation import SandboxUnavailable
from synthgen.sandbox.pool import SandboxPool
from synthgen.sandbox.results import CallVerdict, Job, JobResult, Limits, Status, contest_job

__all__ = [
    "SandboxPool",
    "Job",
    "JobResult",
    "CallVerdict",
    "Status",
    "Limits",
    "SandboxUnavailable",
    "values",
    "contest_job",
]
