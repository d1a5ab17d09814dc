"""The locked room's system-call allow-list, compiled to a BPF program that bubblewrap loads
(`--seccomp <fd>`) just before it executes Node.

The list was built by tracing Node 24 (`strace -f -c`) through fetchers that read and stream
files, write and rename in the temporary folder, compress, hash, parse JSON, use timers and try
the network; calls Node needs that the trace missed (thread exits, signal return, sleeps) were
added by reading what libuv and V8 do. Everything else is refused with EPERM, so a fetcher sees
an ordinary error rather than a crash. Specification: "The locked room", rule 4 ("Only the
system calls a service needs are allowed").
"""

from __future__ import annotations

import errno
import functools
import io
import os

#: Calls Node 24 needs to run a fetcher. Anything missing here fails with EPERM.
# fmt: off
ALLOWED: tuple[str, ...] = (
    # process and threads
    "execve",  # bubblewrap executes Node after loading the filter; the root holds no other program
    "exit", "exit_group", "wait4", "waitid", "getpid", "getppid", "gettid", "getpgrp",
    "set_tid_address", "set_robust_list", "get_robust_list", "rseq", "arch_prctl", "prctl",
    "futex", "futex_waitv", "sched_yield", "sched_getaffinity", "sched_getparam",
    "sched_getscheduler", "sched_get_priority_max", "sched_get_priority_min", "getpriority",
    "setpriority", "kill", "tgkill", "tkill", "capget",
    "getuid", "geteuid", "getgid", "getegid", "getresuid", "getresgid", "getgroups",
    "prlimit64", "getrlimit", "getrusage", "times", "sysinfo", "uname", "umask",
    # signals
    "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigsuspend", "rt_sigtimedwait",
    "rt_sigpending", "sigaltstack", "restart_syscall", "pause",
    # memory
    "brk", "mmap", "munmap", "mremap", "mprotect", "madvise", "mincore", "msync", "mlock",
    "munlock", "membarrier", "memfd_create", "pkey_alloc", "pkey_free", "pkey_mprotect",
    # time
    "clock_gettime", "clock_getres", "clock_nanosleep", "nanosleep", "gettimeofday", "time",
    "timerfd_create", "timerfd_settime", "timerfd_gettime", "getitimer", "setitimer", "alarm",
    # files (the mounts and Node's permission model decide which)
    "read", "write", "readv", "writev", "pread64", "pwrite64", "preadv", "pwritev", "preadv2",
    "pwritev2", "lseek", "close", "close_range", "dup", "dup2", "dup3", "fcntl", "ioctl",
    "open", "openat", "openat2", "creat", "stat", "fstat", "lstat", "newfstatat", "statx",
    "statfs", "fstatfs", "access", "faccessat", "faccessat2", "readlink", "readlinkat",
    "getdents64", "getcwd", "chdir", "fchdir", "mkdir", "mkdirat", "rmdir", "unlink",
    "unlinkat", "rename", "renameat", "renameat2", "link", "linkat", "symlink", "symlinkat",
    "chmod", "fchmod", "fchmodat", "utimensat", "futimesat", "utimes", "truncate", "ftruncate",
    "fallocate", "fadvise64", "fsync", "fdatasync", "flock", "sendfile", "copy_file_range",
    "splice", "getxattr", "lgetxattr", "fgetxattr", "pipe", "pipe2",
    "inotify_init1", "inotify_add_watch", "inotify_rm_watch",
    # event loop
    "epoll_create", "epoll_create1", "epoll_ctl", "epoll_wait", "epoll_pwait", "epoll_pwait2",
    "eventfd", "eventfd2", "poll", "ppoll", "select", "pselect6", "getrandom",
    # sockets: the network namespace reaches nothing, but Node's fetch and dns must fail
    # with an ordinary error; `socket` itself is filtered by family and type below
    "socketpair", "connect", "bind", "listen", "accept", "accept4", "shutdown", "getsockname",
    "getpeername", "getsockopt", "setsockopt", "sendto", "recvfrom", "sendmsg", "recvmsg",
    "sendmmsg", "recvmmsg",
)

#: Refused outright even if a later edit added them above; tests check some of them.
REFUSED: tuple[str, ...] = (
    "ptrace", "process_vm_readv", "process_vm_writev", "mount", "umount2", "pivot_root",
    "chroot", "unshare", "setns", "bpf", "keyctl", "add_key", "request_key",
    "perf_event_open", "userfaultfd", "open_by_handle_at", "name_to_handle_at", "kexec_load",
    "init_module", "finit_module", "delete_module", "fork", "vfork", "personality",
    "move_mount", "open_tree", "fsopen", "fsmount", "fsconfig", "fspick", "mount_setattr",
    "setuid", "setgid", "setreuid", "setregid", "setresuid", "setresgid", "setgroups",
    "io_uring_setup", "io_uring_enter", "io_uring_register",
)
# fmt: on

_NAMESPACE_FLAGS = (
    0x00000080  # CLONE_NEWTIME
    | 0x00020000  # CLONE_NEWNS
    | 0x02000000  # CLONE_NEWCGROUP
    | 0x04000000  # CLONE_NEWUTS
    | 0x08000000  # CLONE_NEWIPC
    | 0x10000000  # CLONE_NEWUSER
    | 0x20000000  # CLONE_NEWPID
    | 0x40000000  # CLONE_NEWNET
)
_SOCK_TYPE_MASK = 0xF
_FAMILIES = {"AF_UNIX": 1, "AF_INET": 2, "AF_INET6": 10}
_TYPES = {"SOCK_STREAM": 1, "SOCK_DGRAM": 2}


class SeccompUnavailable(RuntimeError):
    """The host cannot build or load a seccomp filter; the room refuses to run."""


@functools.cache
def compiled_filter() -> bytes:
    """The BPF program of the room's allow-list for this machine's native ABI.

    Non-native ABIs (i386 via `int 0x80`, x32) are killed: libseccomp's bad-architecture action.
    `clone` is allowed only without namespace flags; `clone3` answers ENOSYS so glibc falls back
    to `clone`, whose flags the filter can read; `socket` only for Unix and IP stream/datagram.
    io_uring answers ENOSYS so libuv falls back to its thread pool.
    """
    try:
        import pyseccomp as seccomp
    except (ImportError, OSError, RuntimeError) as exc:  # libseccomp2 missing or unloadable
        raise SeccompUnavailable(f"seccomp is unavailable: {exc}") from exc

    refuse = seccomp.ERRNO(errno.EPERM)
    try:
        rules = seccomp.SyscallFilter(refuse)
        rules.set_attr(seccomp.Attr.ACT_BADARCH, seccomp.KILL_PROCESS)
        for name in ALLOWED:
            if name in REFUSED:
                continue
            try:
                rules.add_rule(seccomp.ALLOW, name)
            except (ValueError, OSError):
                continue  # a call this kernel's ABI does not have (e.g. `time` on some builds)
        rules.add_rule(
            seccomp.ALLOW, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, _NAMESPACE_FLAGS, 0)
        )
        rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
        for name in ("io_uring_setup", "io_uring_enter", "io_uring_register"):
            rules.add_rule(seccomp.ERRNO(errno.ENOSYS), name)
        for family in _FAMILIES.values():
            for kind in _TYPES.values():
                rules.add_rule(
                    seccomp.ALLOW,
                    "socket",
                    seccomp.Arg(0, seccomp.EQ, family),
                    seccomp.Arg(1, seccomp.MASKED_EQ, _SOCK_TYPE_MASK, kind),
                )
        read_end, write_end = os.pipe()
        try:
            with io.FileIO(write_end, "w", closefd=True) as sink:
                rules.export_bpf(sink)
            with io.FileIO(read_end, "r", closefd=False) as source:
                program = source.readall()
        finally:
            os.close(read_end)
    except OSError as exc:
        raise SeccompUnavailable(f"could not build the seccomp filter: {exc}") from exc
    if not program or len(program) % 8:
        raise SeccompUnavailable("libseccomp exported an empty or malformed BPF program")
    return program


def filter_fd() -> int:
    """A fresh descriptor (memfd, positioned at 0) holding the compiled filter, for bubblewrap.

    The caller passes it with `pass_fds` and closes it after starting bubblewrap.
    """
    program = compiled_filter()
    fd = os.memfd_create("almanac-room-seccomp", os.MFD_CLOEXEC)
    os.write(fd, program)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
