/* SPDX-License-Identifier: MIT */
/* Linked into the MPI programs of a sanitized build only (tests/CMakeLists.txt).
 *
 * Open MPI, PMIx and libevent are built without frame pointers, and they keep allocations until
 * exit that lsan.supp must name by library: ASan's fast unwinder stops at their frames, so these
 * programs unwind fully on every allocation. Full unwinding costs seven times the run time of a
 * Jansson-heavy program, so the programs that load no MPI keep the fast one, and so does
 * topotune-bench --backend sim, the one run of these programs that starts no MPI (a sim sweep's
 * every run is one: full unwinding made them half again as long). ASAN_OPTIONS in the environment
 * still takes precedence, flag by flag. */
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

const char *__asan_default_options(void);

/* ASan asks for its options before its shadow memory and its interceptors are ready: the two
 * functions below are not instrumented, and call no C library function but syscall(). */
#define UNCHECKED __attribute__((no_sanitize("address", "undefined")))

/* a == b (read through volatile: no loop here may become a call of strcmp or strlen) */
UNCHECKED static int same(const volatile char *a, const volatile char *b)
{
    while (*a && *a == *b)
        a++, b++;
    return *a == *b;
}

/* Whether this process's command line holds "--backend sim" or "--backend=sim". An argument past
 * its first 8 KiB is not seen (full unwinding, as before). */
UNCHECKED static int backend_sim(void)
{
    static char cmd[8192];
    long fd = syscall(SYS_openat, AT_FDCWD, "/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    long n = syscall(SYS_read, fd, cmd, sizeof(cmd) - 1);
    syscall(SYS_close, fd);
    if (n <= 0)
        return 0;
    cmd[n] = 0; /* arguments end in NUL each; a last one cut short ends here */
    const volatile char *prev = "";
    for (const volatile char *a = cmd; a < cmd + n;) {
        if (same(a, "--backend=sim") || (same(prev, "--backend") && same(a, "sim")))
            return 1;
        prev = a;
        while (*a)
            a++;
        a++;
    }
    return 0;
}

const char *__asan_default_options(void)
{
    return backend_sim() ? "" : "fast_unwind_on_malloc=0";
}
