"""The seccomp deny-list program (seccomp.py) decides every system call number as its tables say.

This emulates it (classic BPF: ld abs, jeq, jge, jset, ret) for both architectures we have tables
for, every number up to 2047, the x32 range and odd values; clone passes only for a thread
(CLONE_THREAD, no namespace flag), fork and vfork never."""

from __future__ import annotations

import pytest

from tests.helpers.sandbox import zygote_module


@pytest.fixture(scope="module")
def child():
    """The sandbox's seccomp module, imported as the zygote imports it (from its own folder)."""
    with zygote_module("seccomp") as module:
        yield module


def _run(code, arch, nr, flags=0):
    pc, acc = 0, 0
    for _ in range(len(code)):  # forward jumps only: at most one pass
        op, jt, jf, k = code[pc]
        if op == 0x20:  # BPF_LD | BPF_W | BPF_ABS: seccomp_data.nr (0) or .arch (4)
            acc = {0: nr, 4: arch, 16: flags}[k]  # seccomp_data: nr, arch, args[0] (low word)
            pc += 1
        elif op == 0x15:  # BPF_JMP | BPF_JEQ | BPF_K
            pc += 1 + (jt if acc == k else jf)
        elif op == 0x35:  # BPF_JMP | BPF_JGE | BPF_K
            pc += 1 + (jt if acc >= k else jf)
        elif op == 0x45:  # BPF_JMP | BPF_JSET | BPF_K
            pc += 1 + (jt if acc & k else jf)
        elif op == 0x06:  # BPF_RET | BPF_K
            return k
        else:
            raise AssertionError(f"unexpected instruction {op:#x}")
    raise AssertionError("ran off the program")


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_seccomp_program_decides_every_number_as_the_tables_say(child, machine):
    column, audit_arch = child._ARCHES[machine]
    code = child.seccomp_code(column, audit_arch)
    assert len(code) < 256 and all(0 <= jt <= 255 and 0 <= jf <= 255 for _, jt, jf, _ in code)
    denied = {nums[column] for nums in (*child._DENIED.values(), *child._FORKS.values())} - {None}
    clone = child._CLONE[column]
    absent = {nums[column] for nums in child._NOT_AVAILABLE.values()}
    eperm, enosys, allow = child.SECCOMP_RET_EPERM, child.SECCOMP_RET_ENOSYS, child.SECCOMP_RET_ALLOW
    numbers = (
        list(range(2048)) + [0x40000000 + n for n in range(600)] + [0x3FFFFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF]
    )
    for arch in (audit_arch, 0x40000003, 0xC000003E, 0xC00000B7, 0):
        for nr in numbers:
            if arch != audit_arch or (machine == "x86_64" and nr >= 0x40000000) or nr in denied or nr == clone:
                want = eperm  # (clone with flags 0: a new process)
            elif nr in absent:
                want = enosys
            else:
                want = allow
            assert _run(code, arch, nr) == want, (machine, hex(arch), nr)
    thread = 0x3D0F00  # what glibc's pthread_create passes: VM|FS|FILES|SIGHAND|THREAD|SYSVSEM|SETTLS|...
    assert _run(code, audit_arch, clone, thread) == allow
    for flags in (17, 0x4000 | 0x100 | 17, thread | 0x10000000, thread | 0x20000, thread | 0x40000000):
        assert _run(code, audit_arch, clone, flags) == eperm, hex(flags)
