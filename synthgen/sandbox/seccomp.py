"""The seccomp deny-list of every job's child (standard library only): which system calls a job
never needs, as a BPF program built once in the zygote (child.py installs it with prctl).

Copied next to zygote.py with child.py and imported by it as `seccomp`. Denied calls fail with
EPERM (clone3 and io_uring with ENOSYS, so that libc falls back or reports "not available");
fork, vfork and clone without CLONE_THREAD fail, so threads may start but no new process.
"""

import ctypes
import os


def _numbers(table):
    """name -> (x86-64 number, aarch64 number) of a table below."""
    words = table.split()
    return {words[i]: (int(words[i + 1]), int(words[i + 2])) for i in range(0, len(words), 3)}


# Syscalls a job never needs and that mostly widen the kernel's attack surface or let state
# outlive the job, as rows of (name, x86-64 number, aarch64 number).
_DENIED = _numbers("""
    ptrace 101 117               syslog 103 116               acct 163 89
    mount 165 40                 umount2 166 39               swapon 167 224
    swapoff 168 225              reboot 169 142               sethostname 170 161
    setdomainname 171 162        init_module 175 105          delete_module 176 106
    quotactl 179 60              kexec_load 246 104           add_key 248 217
    request_key 249 218          keyctl 250 219               unshare 272 97
    perf_event_open 298 241      name_to_handle_at 303 264    open_by_handle_at 304 265
    setns 308 268                process_vm_readv 310 270     process_vm_writev 311 271
    finit_module 313 273         kexec_file_load 320 294      bpf 321 280
    userfaultfd 323 282          open_tree 428 428            move_mount 429 429
    fsopen 430 430               fsconfig 431 431             fsmount 432 432
    fspick 433 433               mount_setattr 442 442        pivot_root 155 41
    chroot 161 51                vhangup 153 58               lookup_dcookie 212 18
""")
_NOT_AVAILABLE = _numbers("""
    clone3 435 435               io_uring_setup 425 425
    io_uring_enter 426 426       io_uring_register 427 427
""")
# New processes are refused while threads are allowed: fork and vfork (x86-64 only; aarch64 has
# neither) fail, and clone only passes with CLONE_THREAD and no namespace flag (clone3 hides its
# flags in memory a filter cannot read, hence ENOSYS above: libc then falls back to clone).
_FORKS = {"fork": (57, None), "vfork": (58, None)}
_CLONE = (56, 220)
CLONE_THREAD, CLONE_NEW_ANY = 0x00010000, 0x7E020080  # NEWNS|NEWCGROUP|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET|NEWTIME
_ARCHES = {"x86_64": (0, 0xC000003E), "aarch64": (1, 0xC00000B7)}
PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(_SockFilter))]


SECCOMP_RET_ALLOW, SECCOMP_RET_EPERM, SECCOMP_RET_ENOSYS = 0x7FFF0000, 0x00050000 | 1, 0x00050000 | 38
LD, JEQ, JGE, JSET, RET = 0x20, 0x15, 0x35, 0x45, 0x06  # classic BPF: ld abs word, jumps on k, return k


def seccomp_code(column, audit_arch):
    """The deny-list as classic-BPF instructions (code, jt, jf, k) for one architecture.

    A foreign architecture (and, on x86-64, an x32 call: bit 30) gets EPERM; then one compare per
    listed number, in a row, each jumping to its action at the end (jumps only go forward)."""
    checks = [(nums[column], "EPERM") for nums in (*_DENIED.values(), *_FORKS.values()) if nums[column] is not None]
    checks += [(nums[column], "ENOSYS") for nums in _NOT_AVAILABLE.values()] + [(_CLONE[column], "CLONE")]
    code = [(LD, 0, 0, 4), (JEQ, 0, "EPERM", audit_arch), (LD, 0, 0, 0)]  # seccomp_data.arch, then .nr
    if column == 0:
        code.append((JGE, "EPERM", 0, 0x40000000))
    code += [(JEQ, action, 0, nr) for nr, action in checks]
    code.append((RET, 0, 0, SECCOMP_RET_ALLOW))
    labels = {"CLONE": len(code)}  # clone(flags, ...): the low word of flags is seccomp_data.args[0], at 16
    code += [(LD, 0, 0, 16), (JSET, "EPERM", 0, CLONE_NEW_ANY), (JSET, 0, "EPERM", CLONE_THREAD)]
    code.append((RET, 0, 0, SECCOMP_RET_ALLOW))
    labels["EPERM"] = len(code)
    code.append((RET, 0, 0, SECCOMP_RET_EPERM))
    labels["ENOSYS"] = len(code)
    code.append((RET, 0, 0, SECCOMP_RET_ENOSYS))
    out = []
    for pc, (op, jt, jf, k) in enumerate(code):
        jt, jf = (labels[x] - pc - 1 if isinstance(x, str) else x for x in (jt, jf))
        assert 0 <= jt <= 255 and 0 <= jf <= 255
        out.append((op, jt, jf, k))
    return out


def _prctl_args():
    """prctl's arguments that install the deny-list on this machine, or None where we have no table."""
    arch = _ARCHES.get(os.uname().machine)
    if arch is None:
        return None
    code = seccomp_code(*arch)
    program = _SockFprog(len(code), (_SockFilter * len(code))(*[_SockFilter(*c) for c in code]))
    return PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(program), 0, 0


PRCTL_ARGS = _prctl_args()  # built once in the zygote; each child only installs it
