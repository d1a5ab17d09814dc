/* A static test program run INSIDE the locked room (tests only): it tries what Node cannot
 * try directly and prints one JSON object of errno names, so the tests can prove the seccomp
 * filter, the mounts and the task limit hold on their own. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <dirent.h>

static int first = 1;
static void report(const char *name, long rc) {
    printf("%s\"%s\": \"%s\"", first ? "{" : ", ", name, rc < 0 ? strerrorname_np(errno) : "ok");
    first = 0;
}

static long raw_syscall(long nr) { return syscall(nr, 0, 0, 0, 0, 0, 0); }

int main(int argc, char **argv) {
    const char *what = argc > 1 ? argv[1] : "syscalls";
    if (strcmp(what, "syscalls") == 0) {
        report("unshare_user", unshare(CLONE_NEWUSER));
        report("unshare_net", unshare(CLONE_NEWNET));
        report("mount_tmpfs", mount("none", "/tmp", "tmpfs", 0, NULL));
        report("ptrace_init", ptrace(PTRACE_ATTACH, 1, NULL, NULL));
        report("ptrace_traceme", ptrace(PTRACE_TRACEME, 0, NULL, NULL));
        report("socket_raw", socket(AF_INET, SOCK_RAW, 1));
        report("socket_packet", socket(17 /* AF_PACKET */, SOCK_RAW, 0));
        report("socket_netlink", socket(AF_NETLINK, SOCK_RAW, 0));
        report("socket_tcp", socket(AF_INET, SOCK_STREAM, 0));
        report("clone3", raw_syscall(SYS_clone3));
        long cloned = syscall(SYS_clone, CLONE_NEWNS | SIGCHLD, 0, 0, 0, 0);
        if (cloned == 0) _exit(0);
        report("clone_newns", cloned);
        report("setns", syscall(SYS_setns, 0, 0));
        report("bpf", raw_syscall(SYS_bpf));
        report("keyctl", raw_syscall(SYS_keyctl));
        report("perf_event_open", raw_syscall(SYS_perf_event_open));
        report("userfaultfd", raw_syscall(SYS_userfaultfd));
        report("io_uring_setup", syscall(SYS_io_uring_setup, 1, NULL));
        report("chroot", chroot("/tmp"));
        struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
        struct __user_cap_data_struct data[2] = {{0}};
        long caps = syscall(SYS_capget, &header, data);
        printf(", \"capabilities\": %u", caps == 0 ? data[0].effective | data[1].effective : 99u);
        pid_t child = fork();
        if (child == 0) _exit(7);
        int status = 0;
        waitpid(child, &status, 0);
        printf(", \"fork_exit\": %d", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        printf(", \"uid\": %d}\n", (int)getuid());
    } else if (strcmp(what, "files") == 0) {
        struct stat st;
        const char *paths[] = {"/etc/passwd", "/proc/1/environ", "/proc/self/environ", "/root",
                               "/dev/null", "/sys", "/home", "/work"};
        for (unsigned i = 0; i < sizeof paths / sizeof *paths; i++) report(paths[i], stat(paths[i], &st));
        for (int i = 2; i < argc; i++) report(argv[i], stat(argv[i], &st));  /* host paths named by the test */
        report("write_plugin", open("/plugin/new", O_WRONLY | O_CREAT, 0644));
        report("write_root", open("/new", O_WRONLY | O_CREAT, 0644));
        report("write_tmp", open("/tmp/new", O_WRONLY | O_CREAT, 0644));
        printf(", \"root\": \"");
        DIR *dir = opendir("/");
        struct dirent *entry;
        while (dir && (entry = readdir(dir))) if (entry->d_name[0] != '.') printf("%s ", entry->d_name);
        printf("\"}\n");
    } else if (strcmp(what, "i386") == 0) {
        long rc;
        fflush(stdout);
        __asm__ volatile("int $0x80" : "=a"(rc) : "a"(20) : "memory");  /* getpid, i386 ABI */
        printf("{\"i386\": %ld}\n", rc);
    } else if (strcmp(what, "x32") == 0) {
        fflush(stdout);
        long rc = syscall(0x40000000 | 39);  /* getpid, x32 ABI */
        printf("{\"x32\": %ld}\n", rc);
    } else if (strcmp(what, "forkbomb") == 0) {
        int made = 0;
        for (int i = 0; i < 200; i++) {
            pid_t pid = fork();
            if (pid == 0) { pause(); _exit(0); }
            if (pid < 0) break;
            made++;
        }
        printf("{\"forks\": %d}\n", made);
        fflush(stdout);
        pause();
    }
    fflush(stdout);
    return 0;
}
