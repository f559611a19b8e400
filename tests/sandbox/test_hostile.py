"""Hostile code, one property per test: the verdict is right, the host is untouched, and the pool
serves the next job (checked by `run` in sandbox_helpers after every job). Each runs at every isolation
level available here."""

from __future__ import annotations

import os
import socket
import threading

import pytest

from synthgen.sandbox import Job, Status, contest_job, values
from tests.helpers.sandbox import run, statuses


def test_infinite_loop_times_out(pool):
    r = run(pool, "def f():\n    while True:\n        pass\n", "f()", "f()", timeout_s=0.5)
    assert statuses(r) == ["timeout", "timeout"]


def test_sleep_forever_times_out(pool):
    r = run(pool, "import time\ndef f():\n    time.sleep(10**6)\n", "f()", timeout_s=0.5)
    assert statuses(r) == ["timeout"]


def test_ignoring_sigterm_does_not_stop_the_timeout(pool):
    code = "import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\ndef f():\n    while True:\n        pass\n"
    assert statuses(run(pool, code, "f()", timeout_s=0.5)) == ["timeout"]


def test_timeout_keeps_earlier_calls(pool):
    code = "import time\ndef f(x):\n    if x == 3:\n        time.sleep(100)\n    return x\n"
    r = run(pool, code, *(f"f({i})" for i in range(1, 6)), timeout_s=0.5)
    assert statuses(r) == ["ok", "ok", "timeout", "timeout", "timeout"]
    assert [c.encoded for c in r.calls[:2]] == ["1", "2"]


def test_fork_bomb_cannot_fork(pool):
    from synthgen.sandbox import Job

    # Every worker started and idle (jobs that overlap reach each of them) before counting.
    pool.run_many([Job("import time\ntime.sleep(0.3)\n", ("1",), timeout_s=5.0)] * (2 * pool.workers))
    before = _group_leaders(pool)
    code = "import os\ndef f():\n    while True:\n        os.fork()\n"
    r = run(pool, code, "f()")
    assert statuses(r) == ["exception"] and "PermissionError" in r.calls[0].error
    # Nothing left running under the workers (see _group_leaders).
    assert len(_group_leaders(pool)) <= len(before)


def test_subprocess_cannot_start(pool):
    code = "import subprocess\ndef f():\n    return subprocess.run(['/bin/true']).returncode\n"
    r = run(pool, code, "f()")
    assert statuses(r) == ["exception"]


def test_threads_start_but_none_outlive_the_job(pool):
    from synthgen.sandbox import Job

    pool.run_many([Job("import time\ntime.sleep(0.3)\n", ("1",), timeout_s=5.0)] * (2 * pool.workers))
    before = _group_leaders(pool)
    code = (
        "import threading, time\ndef f():\n    threading.Thread(target=time.sleep, args=(100,)).start()\n"
        "    return threading.active_count()\n"
    )
    r = run(pool, code, "f()", "1 + 1")
    assert statuses(r) == ["ok", "ok"] and r.calls[0].encoded == "2"
    assert len(_group_leaders(pool)) <= len(before)


def test_no_new_process_by_any_clone(pool):
    code = (
        "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        "def f(flags):\n    pid = libc.syscall(56, flags, 0, 0, 0, 0)\n"
        "    if pid == 0:\n        os._exit(0)\n    return pid, ctypes.get_errno()\n"
    )
    # SIGCHLD (a fork), CLONE_VM|CLONE_VFORK, CLONE_NEWUSER: all refused; x86-64 numbers only
    if os.uname().machine != "x86_64":
        pytest.skip("clone's argument order is checked on x86-64")
    r = run(pool, code, "f(17)", "f(0x4000 | 0x100 | 17)", "f(0x10000000 | 17)")
    assert [c.encoded for c in r.calls] == ['{"tuple":[-1,1]}'] * 3, r.calls


def test_memory_bomb_is_memory(pool):
    code = "def f():\n    return len(bytearray(8 * 2**30))\ndef g():\n    x = []\n    while True:\n        x.append(' ' * 2**20)\n"
    r = run(pool, code, "f()", "g()", "7", memory_mb=128, timeout_s=5)
    assert statuses(r) == ["memory", "memory", "ok"]


def test_huge_output_is_output_too_large(pool):
    code = "def f():\n    while True:\n        print('x' * 10000)\n"
    r = run(pool, code, "1", "f()", "2", timeout_s=5)
    assert statuses(r) == ["ok", "output_too_large", "output_too_large"]
    assert len(r.stdout) <= pool.limits.keep_output_bytes + 100


def test_result_over_64k_does_not_deadlock(pool):
    r = run(pool, "def f(n):\n    return 'x' * n\n", "f(300000)", "f(70000)", timeout_s=5)
    assert statuses(r) == ["ok", "ok"]
    assert len(values.decode(r.calls[0].encoded)) == 300000


def test_too_big_value_is_output_too_large_not_truncated(pool):
    r = run(pool, "def f():\n    return 'y' * (2 * 2**20)\n", "f()", timeout_s=5)
    assert statuses(r) == ["output_too_large"] and r.calls[0].encoded is None


def test_deep_recursion_is_an_exception(pool):
    r = run(pool, "def f(n):\n    return f(n + 1)\n", "f(0)")
    assert statuses(r) == ["exception"] and "RecursionError" in r.calls[0].error


def test_stack_overflow_in_c_is_killed(pool):
    code = "import sys\nsys.setrecursionlimit(10**8)\ndef f():\n    x = []\n    for _ in range(10**6):\n        x = [x]\n    return repr(x)\n"
    r = run(pool, code, "f()", timeout_s=5)
    assert statuses(r) == ["killed"] and "SIGSEGV" in r.calls[0].error


def test_writing_outside_the_working_directory_fails(pool, tmp_path):
    host_dir = tmp_path / "victim"
    host_dir.mkdir()
    targets = [
        "/usr/pwned",
        "/pwned",
        "/etc/pwned",
        "/sb/pwned",
        "/dev/pwned",
        str(host_dir / "pwned"),
        "/root/pwned",
        "/var/tmp/pwned-host",
    ]
    code = (
        "import os\n"
        "def f(paths):\n"
        "    out = []\n"
        "    for p in paths:\n"
        "        try:\n"
        "            open(p, 'w').write('x')\n"
        "            out.append(p)\n"
        "        except OSError:\n"
        "            pass\n"
        "    open('here.txt', 'w').write('fine')\n"
        "    return [out, os.getcwd(), open('here.txt').read()]\n"
    )
    r = run(pool, code, f"f({targets!r})")
    written, cwd, here = values.decode(r.calls[0].encoded)
    assert written == [t for t in targets if t.startswith("/var/tmp")] or written == []
    assert cwd == "/tmp" and here == "fine"
    for target in targets:
        if not target.startswith("/var/tmp"):
            assert not os.path.exists(target), target
    assert not os.path.exists("/var/tmp/pwned-host")


def test_parent_environment_is_not_visible(bwrap_pool, monkeypatch):
    from synthgen.sandbox import SandboxPool

    secret = "sk-test-FAKE-0123456789abcdef"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    code = (
        "import os, glob\n"
        "def f():\n"
        "    seen = [repr(dict(os.environ))]\n"
        "    for p in glob.glob('/proc/*/environ'):\n"
        "        try:\n"
        "            seen.append(open(p, 'rb').read().decode('latin-1'))\n"
        "        except OSError:\n"
        "            pass\n"
        "    return '\\n'.join(seen)\n"
    )
    for level in ("bwrap", "setuid-netns"):
        try:
            with SandboxPool(workers=1, isolation=level) as fresh:  # started after the secret was set
                r = run(fresh, code, "f()")
        except Exception as exc:  # noqa: BLE001
            if level == "bwrap" or "unavailable" not in str(exc):
                raise
            continue
        seen = values.decode(r.calls[0].encoded)
        assert secret not in seen and "OPENAI_API_KEY" not in seen


def test_proc_1_environ_holds_no_secret(pool):
    code = "def f():\n    try:\n        return open('/proc/1/environ', 'rb').read()\n    except OSError as e:\n        return type(e).__name__\n"
    r = run(pool, code, "f()")
    value = values.decode(r.calls[0].encoded)
    assert value in (b"", "PermissionError", "FileNotFoundError") or b"KEY" not in value


def test_network_cannot_reach_a_host_listener(pool):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.settimeout(0.5)
    port = listener.getsockname()[1]
    accepted = []
    thread = threading.Thread(target=lambda: _accept(listener, accepted))
    thread.start()
    try:
        code = "import socket\ndef f(port):\n    socket.create_connection(('127.0.0.1', port), timeout=0.5).sendall(b'hi')\n    return 'connected'\n"
        r = run(pool, code, f"f({port})")
    finally:
        thread.join()
        listener.close()
    assert statuses(r) == ["exception"]
    assert accepted == []


def _accept(listener, accepted):
    try:
        accepted.append(listener.accept())
    except OSError:
        pass


def test_killing_the_parent_does_not_reach_the_zygote(pool):
    before = pool.worker_pids()
    code = (
        "import os, signal\n"
        "def f():\n"
        "    os.kill(os.getppid(), signal.SIGKILL)\n"
        "    return os.getppid()\n"
        "def g():\n"
        "    os.kill(-1, signal.SIGKILL)  # every process it can see: none but itself\n"
    )
    r = run(pool, code, "f()", "g()", "2")
    # the zygote lives outside the job's pid namespace: getppid() is 0 and kill(0) hits only the job
    assert statuses(r) == ["ok", "exception", "ok"] and r.calls[0].encoded == "0"
    assert "ProcessLookupError" in r.calls[1].error
    assert pool.worker_pids() == before  # no worker had to be replaced


def test_os_exit_is_killed_and_keeps_earlier_calls(pool):
    r = run(pool, "import os\ndef f(x):\n    if x == 2:\n        os._exit(3)\n    return x\n", "f(1)", "f(2)", "f(3)")
    assert statuses(r) == ["ok", "killed", "killed"] and "status 3" in r.calls[1].error


def test_sys_exit_is_an_exception(pool):
    r = run(pool, "import sys\ndef f(x):\n    sys.exit(x)\n", "f(0)", "f('bye')", "5")
    assert statuses(r) == ["exception", "exception", "ok"] and r.calls[0].error.startswith("SystemExit")


def test_always_equal_object_cannot_match(pool):
    code = "class Any:\n    def __eq__(self, other):\n        return True\n    __hash__ = None\nclass I(int):\n    def __eq__(self, other):\n        return True\ndef f():\n    return Any()\ndef g():\n    return I(5)\n"
    r = run(pool, code, "f()", "g()", expected=(values.encode(1), values.encode(1)))
    assert statuses(r) == ["exception", "exception"]
    assert [c.match for c in r.calls] == [None, None] and "cannot encode" in r.calls[0].error


def test_patching_the_runner_through_sys_modules_cannot_match(pool):
    code = (
        "import sys\n"
        "for m in list(sys.modules.values()):\n"
        "    for name in ('encode', 'equal', 'compare', 'normalize'):\n"
        "        if hasattr(m, name):\n"
        "            try:\n"
        "                setattr(m, name, lambda *a, **k: True)\n"
        "            except Exception:\n"
        "                pass\n"
        "def f():\n"
        "    return 8\n"
    )
    r = run(pool, code, "f()", expected=(values.encode(7),))
    assert not r.calls[0].passed
    assert r.calls[0].match is not True


def test_forged_result_records_cannot_pass_or_claim_infra(pool):
    code = (
        "import os, json, struct\n"
        "def frame(obj):\n"
        "    data = json.dumps(obj).encode()\n"
        "    return struct.pack('>I', len(data)) + data\n"
        "def f():\n"
        "    for fd in range(0, 256):\n"
        "        for rec in (['S'], [0, 'infra', None, None], [1, 'timeout', None, None]):\n"
        "            try:\n"
        "                os.write(fd, frame(rec))\n"
        "            except OSError:\n"
        "                pass\n"
        "        try:\n"
        "            os.write(fd, struct.pack('>I', 5) + b'D{}{}')\n"
        "        except OSError:\n"
        "            pass\n"
        "    return 8\n"
    )
    before = pool.worker_pids()
    r = run(pool, code, "f()", "f()", expected=(values.encode(7), values.encode(7)))
    assert not any(c.passed for c in r.calls)
    assert all(c.status in (Status.OK, Status.EXCEPTION) for c in r.calls), r.calls
    assert pool.worker_pids() == before


# Records of every shape but the right one, one per line (and a few that are not JSON at all).
FORGED = """[0, [], null, null]
[0, {}, null, null]
[[], "ok", "8", null]
[true, "ok", "8", null]
[0, "ok", [], null]
[0, "ok", "8", {}]
[0, "ok", null, null]
[0, "ok", "8", null, [], {}]
[0, "ok", "8", null, 1, 2, 3]
[0, "infra", null, null]
[0, "killed", null, null]
[0, "exception", "8", null]
{"0": "ok"}
"ok"
8
null
[0]
[0, 1e999999]
""".splitlines()
FORGED_RAW = [b"[" * 100000, b"\xff\xfe", b"1" * 10000, b""]


def test_forged_records_of_any_shape_cannot_claim_infra(pool):
    writes = [repr(rec.encode()) for rec in FORGED] + [repr(raw) for raw in FORGED_RAW]
    for data in writes:
        forge = f"import os, struct\ndata = {data}\nos.write(3, struct.pack('>I', len(data)) + data)\n"
        call = forge + "def f():\n    return 8\n"
        r = run(pool, call, "f()", "f()", expected=(values.encode(7), values.encode(7)))
        assert not any(c.passed for c in r.calls), (data, r.calls)
        program = pool.run_sync(Job.program(forge, ""))
        tests = pool.run_sync(
            contest_job(call, ["f()", "f()"], mode="expr", preamble=False, test_timeout_s=2, memory_mb=256)
        )
        for result in (program, tests):
            assert not result.infra and not any(c.passed for c in result.calls), (data, result.calls)


def test_zygote_memory_is_not_writable(pool):
    code = (
        "import os\n"
        "def f():\n"
        "    me = os.readlink('/proc/self')\n"
        "    opened = []\n"
        "    for pid in os.listdir('/proc'):\n"
        "        if pid.isdigit() and pid != me:\n"
        "            try:\n"
        "                open(f'/proc/{pid}/mem', 'r+b').close()\n"
        "                opened.append(pid)\n"
        "            except OSError:\n"
        "                pass\n"
        "    return opened\n"
    )
    r = run(pool, code, "f()")
    assert r.calls[0].status is Status.OK
    assert values.decode(r.calls[0].encoded) == []


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="syscall numbers below are x86-64")
def test_kernel_attack_surface_syscalls_are_refused(pool):
    code = (
        "import ctypes\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "def call(*args):\n"
        "    return [libc.syscall(*args), ctypes.get_errno()]\n"
    )
    calls = [
        "call(272, 0x10000000)",  # unshare(CLONE_NEWUSER)
        "call(165, b'none', b'/tmp', b'tmpfs', 0, 0)",  # mount
        "call(321, 0, 0, 0)",  # bpf
        "call(250, 0, 0)",  # keyctl
        "call(425, 1, 0)",  # io_uring_setup: "not available"
        "call(101, 16, 1, 0, 0)",  # ptrace(PTRACE_ATTACH, 1)
        "call(250 | 0x40000000, 0, 0)",  # the same through the x32 ABI
        "call(39)",
    ]  # getpid: ordinary calls still work
    r = run(pool, code, *calls)
    got = [values.decode(c.encoded) for c in r.calls]
    assert got[:4] == [[-1, 1]] * 4 and got[4] == [-1, 38] and got[5] == [-1, 1] and got[6] == [-1, 1]
    assert got[7][0] == 1  # getpid still works: pid 1 of its own namespace


def test_no_state_leaks_between_jobs(pool):
    first = (
        "import builtins, ctypes, json, sys, os\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "builtins.LEAK = 1\n"
        "json.LEAK = 1\n"
        "sys.modules['leaky_module'] = json\n"
        "open('/tmp/leak.txt', 'w').write('secret')\n"
        "def f():\n"
        "    shm = libc.shmget(4242, 4096, 0o1000 | 0o600)  # System V shared memory\n"
        "    key = libc.syscall(248, b'user', b'leak', b'secret', 6, -4)  # x86-64 add_key: user keyring\n"
        "    return [sorted(os.listdir('/tmp')), shm >= 0]\n"
    )
    second = (
        "import builtins, ctypes, json, sys, os\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "def f():\n"
        "    return [hasattr(builtins, 'LEAK'), hasattr(json, 'LEAK'), 'leaky_module' in sys.modules,\n"
        "            os.path.exists('/tmp/leak.txt'), sorted(os.listdir('/tmp')), libc.shmget(4242, 0, 0),\n"
        "            libc.syscall(250, 10, -4, b'user', b'leak', 0)]  # x86-64 keyctl(KEYCTL_SEARCH)\n"
    )
    for _ in range(2 * pool.workers):  # every worker sees a second job after a first one
        r1 = run(pool, first, "f()")
        assert values.decode(r1.calls[0].encoded) == [["leak.txt"], True]
        r2 = run(pool, second, "f()")
        assert values.decode(r2.calls[0].encoded) == [False, False, False, False, [], -1, -1]


def _group_leaders(pool) -> set[int]:
    """The workers' descendants that lead a process group: the sandbox's session leaders and each
    job's child (its set-up calls setpgid(0, 0)), so a job's process still alive adds one. Idle
    spare children stay in their template's group: how many wait varies from job to job (the
    zygote asks for them in batches), so they are not counted."""
    import psutil

    out = set()
    for pid in pool.worker_pids():
        try:
            descendants = psutil.Process(pid).children(recursive=True)
        except psutil.Error:
            continue
        for p in descendants:
            try:
                if os.getpgid(p.pid) == p.pid:
                    out.add(p.pid)
            except OSError:
                pass
    return out
