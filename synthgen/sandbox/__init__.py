"""The only place model-written code runs: a pool of sandboxed zygotes, one fresh child per job.

    from synthgen.sandbox import SandboxPool, Job, values
    with SandboxPool() as pool:
        r = pool.run_sync(Job("def f(x):\n    return x + 1\n", ("f(1)", "f('a')"),
                              expected=(values.from_literal("2"), None)))
        r.isolation                    # "bwrap", "setuid-netns" or "rlimits-only"
        r.calls[0].status, r.calls[0].match, r.calls[1].error   # ok True "TypeError: ..."
        p = pool.run_sync(Job.program("print(int(input()) * 2)", "21\n"))   # a script on stdin
        p.calls[0].status, p.calls[0].value                      # ok "42\n" (its whole stdout)

Layout: pool.py (the queue, the I/O thread, asyncio/sync API), workers.py (one zygote as the pool
sees it), isolation.py (levels and how to start them),
libraries.py (numpy and the like, bound in read-only), results.py (Job, parsing what comes back),
verdicts.py (statuses and verdicts), contest_results.py (contest-tests jobs: a sample's tests in
one process with LiveCodeBench's semantics), values.py (canonical encoding and comparison),
cli.py (`synthgen sandbox`, JSON lines); zygote.py, template.py, child.py, seccomp.py, contest_runner.py and
contest_program.py are the scripts that run inside the sandbox (standard library only, copied there with values.py).

Threat model
------------
The code under test is hostile and may do anything Python can. What holds, at level "bwrap":
  * The host is untouched: the sandbox runs as uid 65534 with no capabilities on the host, with an
    empty environment (nothing from the host's environment, also not via /proc/1/environ), no
    network (own namespace; a listener on the host's 127.0.0.1 is unreachable), its own pid
    namespace, and a file system of read-only /usr plus the zygote's read-only folder. Each job
    gets a fresh, size-capped tmpfs /tmp as its working directory and a fresh IPC namespace;
    nothing written there outlives the job.
  * No job sees another job's data. Every job's child is forked from the *template*, a process
    the zygote forks before it reads anything from the host and that never receives job data: it
    only forks spare children on request. A spare is then handed its job's descriptors (a memory
    file holding the job's JSON, the result and output pipes) and three limits, and reads its
    own job from that file, so the memory it inherits (heap, stack, the frames of the loop that
    forked it, the collector's live objects) holds nothing of an earlier job: not its code,
    calls, results or output, and not the teacher's validation run of the same problem. The
    zygote, which every job and result passes through, is never forked again. Covered, with a
    hostile test each (tests/sandbox/test_job_isolation.py): a job reading its own mappings
    (/proc/self/maps and the memory itself), live objects, its stack of frames, its environment,
    and files (a fresh tmpfs /tmp per job and nothing else writable at "bwrap"; at
    "setuid-netns" /var/tmp and /dev/shm fresh too); and the zygote's and template's memory (not
    dumpable: /proc/<pid>/mem is refused; ptrace and process_vm_readv are refused by seccomp).
  * Jobs cannot touch each other, the zygote or the template: each job's child is pid 1 of its
    own pid namespace (it cannot see or signal them or other jobs) and has its own user, mount
    and IPC namespaces (fresh keyrings, System V IPC and /tmp); the child inherits no descriptor
    but its stdout/stderr capture pipes and its result pipe, and it exits after the job (no
    module, builtin or global survives). Where a job could kill its template or zygote anyway
    (only at "rlimits-only", which has no pid namespace), its result is `infra`, the worker is
    replaced, and jobs sent behind it run on the new one.
  * Less kernel to attack: no capabilities, no_new_privs, and a seccomp filter (x86-64,
    aarch64) that refuses mount, namespace, keyring, ptrace, bpf, io_uring, perf, module and
    similar system calls.
  * Resources are bounded: wall clock (SIGKILL of the child's whole pid namespace), CPU time,
    address space, file size, open files, no new processes (seccomp refuses fork, vfork and
    clone without CLONE_THREAD; threads may start and die with the job), no core dumps, captured
    output and result sizes (a job over a cap gets `output_too_large`).
  * Program jobs (stdin/stdout solutions) get the same isolation: the input is an in-memory file
    made before any job code runs, and the answer is the stdout the zygote captured from outside.
  * Verdicts are honest: expected values never enter the sandbox (every environment's check,
    contest tests and the training reward send code and inputs only, and compare in the host);
    the child returns canonical, type-tagged encodings that the host decodes without evaluating
    and compares type-strictly. A forged result record can at most claim a value, which still
    has to equal the hidden expected value. Statuses such as timeout, killed and infra come only
    from what the zygote observed from outside the child; `infra` (the sandbox failed) is never
    reported as a wrong answer.

What is NOT covered:
  * Kernel exploits: all levels share the host kernel (namespaces, not a VM); the seccomp
    deny-list narrows what is reachable but is not an allow-list.
  * Reading world-readable files under /usr (and, at "setuid-netns", anywhere on the host that
    "others" may read; world-writable host folders other than /tmp, /var/tmp, /dev/shm stay
    writable there). Nothing secret should live in world-readable files.
  * Side channels (timing, /proc of the sandbox's own processes, CPU contention) and denial of
    service against the machine as a whole beyond the limits above (memory is capped per job,
    but workers x memory_mb must fit in RAM; tmpfs /tmp counts towards host memory).
  * HumanEval (evaluation only, never a reward) runs the benchmark's own test code, which holds
    its expected values, in the same process as the answer, as the benchmark's harness does.
  * Code that needs subprocesses, the network or site-packages other than the libraries the
    settings name (`sandbox.libraries`, numpy by default, bound read-only): it fails (honestly,
    as an exception), it is not given those things.
  * Level "rlimits-only" isolates nothing: limits only; refused unless allow_unsafe=True.
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
