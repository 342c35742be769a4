/* SPDX-License-Identifier: MIT */
/* Supervised children: process groups, deadlines, SIGTERM then SIGKILL, reaping. */
#include "util/child.h"
#include "util/error.h"
#include "util/file.h"
#include "util/log.h"
#include "util/mem.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_LIVE 64

/* Process groups of live children, for the signal handler: plain ints, no locks. */
static volatile sig_atomic_t live[MAX_LIVE];
/* util_child_supervise: the signal that arrived (0: none), and the watchdog's pipe (-1: none). */
static volatile sig_atomic_t interrupted, deferred;
static int watch_fd = -1;

/* Tells the watchdog that group pgid is live (+) or gone (-): one write of an int is atomic. */
static void tell_watchdog(int pgid)
{
    if (watch_fd >= 0 && write(watch_fd, &pgid, sizeof(pgid)) < 0)
        return; /* the watchdog is gone: the parent-death signal still ends the leaders */
}

static void track(pid_t pgid)
{
    for (int i = 0; i < MAX_LIVE; i++)
        if (!live[i]) {
            live[i] = pgid;
            tell_watchdog(pgid);
            return;
        }
}

static int tracked(pid_t pid)
{
    for (int i = 0; i < MAX_LIVE; i++)
        if (live[i] == pid)
            return 1;
    return 0;
}

static void untrack(pid_t pgid)
{
    for (int i = 0; i < MAX_LIVE; i++)
        if (live[i] == pgid) {
            live[i] = 0;
            tell_watchdog(-pgid);
        }
}

void util_child_kill_all(void)
{
    for (int i = 0; i < MAX_LIVE; i++)
        if (live[i])
            kill(-(pid_t)live[i], SIGKILL);
}

/* Deferred (util_child_supervise): the groups die now, the caller's wait reaps them and says
 * what was interrupted; a second signal exits at once. */
static void on_signal(int sig)
{
    util_child_kill_all();
    if (deferred && !interrupted) {
        interrupted = sig;
        return;
    }
    util_temp_remove_all(); /* the caller's cleanup is never reached */
    signal(sig, SIG_DFL);
    _exit(128 + sig);
}

void util_child_setup(void)
{
    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    if (deferred)
        sigaction(SIGHUP, &sa, NULL);
}

/*
 * The session of process pid, read from /proc/PID/stat with system calls only (the watchdog
 * may not call malloc or stdio); 0 when gone or a zombie.
 */
static long session_of(const char *pid)
{
    char path[64] = "/proc/", buf[512];
    size_t n = strlen(pid);
    if (n > 20)
        return 0;
    memcpy(path + 6, pid, n);
    memcpy(path + 6 + n, "/stat", 6);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t len = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (len <= 0)
        return 0;
    buf[len] = '\0';
    char *p = strrchr(buf, ')');
    if (!p || p[1] != ' ' || p[2] == 'Z')
        return 0;
    p += 3;
    for (int field = 0; field < 2; field++) /* ppid and pgrp, then the session */
        for (p++; *p && *p != ' ';)
            p++;
    long sid = 0;
    for (p++; *p >= '0' && *p <= '9'; p++)
        sid = sid * 10 + (*p - '0');
    return sid;
}

/* SIGKILL to every process whose session is in sids[n] (system calls only); how many. */
static int kill_sessions(const int *sids, int n)
{
    char buf[8192];
    int fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC), found = 0;
    long got;
    while (fd >= 0 && (got = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0)
        for (long at = 0; at < got;) {
            struct {
                unsigned long long ino;
                long long off;
                unsigned short reclen;
                unsigned char type;
                char name[];
            } *d = (void *)(buf + at);
            at += d->reclen;
            long sid = d->name[0] >= '1' && d->name[0] <= '9' ? session_of(d->name) : 0;
            for (int i = 0; sid && i < n; i++)
                if (sids[i] == sid) {
                    long pid = 0;
                    for (const char *c = d->name; *c; c++)
                        pid = pid * 10 + (*c - '0');
                    found += kill((pid_t)pid, SIGKILL) == 0;
                }
        }
    if (fd >= 0)
        close(fd);
    return found;
}

/*
 * The watchdog, forked from a process that may have threads: only async-signal-safe calls. It
 * keeps the set of live sessions the parent tells it about; when the parent dies (kill -9
 * included) its end of the pipe closes, and the watchdog kills every process of those sessions
 * (the launcher, and MPI ranks in process groups of their own), until none is left.
 */
static void watchdog(int fd)
{
    static int sids[MAX_LIVE];
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = SIG_IGN; /* a terminal's signals are for the sweep, which tells us */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    prctl(PR_SET_NAME, "topotune-watch", 0, 0, 0);
    for (int i = 0; i < 1024; i++) /* no lock, log or terminal of the parent's stays open */
        if (i != fd)
            close(i);
    for (;;) {
        int g;
        ssize_t n = read(fd, &g, sizeof(g));
        if (n < 0 && errno == EINTR)
            continue;
        if (n != (ssize_t)sizeof(g))
            break; /* the parent is gone */
        for (int i = 0; i < MAX_LIVE; i++)
            if (g > 0 ? !sids[i] : sids[i] == -g) {
                sids[i] = g > 0 ? g : 0;
                break;
            }
    }
    for (int round = 0; round < 250 && kill_sessions(sids, MAX_LIVE); round++) {
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    _exit(0);
}

void util_child_supervise(void)
{
    deferred = 1;
    util_child_setup();
    int fds[2];
    if (watch_fd >= 0 || pipe2(fds, O_CLOEXEC))
        return;
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[1]);
        watchdog(fds[0]);
    }
    close(fds[0]);
    if (pid > 0)
        watch_fd = fds[1];
    else
        close(fds[1]);
}

int util_child_interrupted(void)
{
    return interrupted;
}

double util_clock_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * What the child will exec, built in the parent: after cuInit the parent has
 * driver threads, and between fork and exec only async-signal-safe calls are
 * allowed (no putenv, no malloc, no PATH search by execvp).
 */
struct exec_plan {
    char *path;   /* argv[0] resolved through PATH */
    char **envp;  /* this process's environment with c->env added or replacing */
    int err;      /* the program was not found: reported as the exec's errno */
    int log, out; /* the capture files, opened by the parent (util_file_open_output), or -1 */
    unsigned long long max_file; /* RLIMIT_FSIZE for the child (UTIL_CHILD_MAX_FILE_BYTES) */
};

/* UTIL_CHILD_MAX_FILE_BYTES, or the smaller TOPOTUNE_CHILD_MAX_FILE_BYTES (tests: never larger). */
static unsigned long long max_file_bytes(void)
{
    const char *v = getenv("TOPOTUNE_CHILD_MAX_FILE_BYTES");
    char *end;
    unsigned long long n = v && *v ? strtoull(v, &end, 10) : 0;
    return n > 0 && !*end && n < UTIL_CHILD_MAX_FILE_BYTES ? n : UTIL_CHILD_MAX_FILE_BYTES;
}

static int same_name(const char *a, const char *b)
{
    size_t n = strcspn(a, "=");
    return strncmp(a, b, n) == 0 && (b[n] == '=' || b[n] == '\0') && a[n] == '=';
}

static char **build_env(char *const *add)
{
    extern char **environ;
    size_t n = 0, k = 0;
    while (environ[n])
        n++;
    for (char *const *e = add; e && *e; e++)
        k++;
    char **envp = util_xcalloc(n + k + 1, sizeof(char *));
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        int replaced = 0;
        for (char *const *e = add; e && *e && !replaced; e++)
            replaced = same_name(*e, environ[i]);
        if (!replaced)
            envp[m++] = environ[i];
    }
    for (char *const *e = add; e && *e; e++)
        envp[m++] = *e;
    return envp;
}

/* argv0 itself when it has a slash, else the first executable of that name in PATH. */
static char *resolve(const char *argv0, int *err);

char *util_child_which(const char *name)
{
    int err = 0;
    return resolve(name, &err);
}

static char *resolve(const char *argv0, int *err)
{
    if (strchr(argv0, '/'))
        return util_xstrdup(argv0);
    const char *path = getenv("PATH");
    *err = ENOENT;
    for (const char *p = path && *path ? path : "/usr/local/bin:/usr/bin:/bin"; *p;) {
        size_t len = strcspn(p, ":");
        char *cand = util_xmalloc(len + strlen(argv0) + 2);
        snprintf(cand, len + strlen(argv0) + 2, "%.*s%s%s", (int)len, p, len ? "/" : "", argv0);
        if (access(cand, X_OK) == 0) {
            *err = 0;
            return cand;
        }
        if (errno == EACCES)
            *err = EACCES;
        free(cand);
        p += len + (p[len] == ':');
    }
    return NULL;
}

/*
 * The log and the result file, opened here rather than in the child: they lie in output folders
 * a hostile user may have prepared, so never through a planted link, FIFO or hard link
 * (util_file_open_output), and a refusal is an error the caller sees, not a silent /dev/null.
 */
static int open_captures(const struct util_child *c, struct exec_plan *plan)
{
    const char *why = NULL, *bad = NULL;
    if (c->log && (plan->log = util_file_open_output(c->log, UTIL_FILE_TRUNC, &why)) < 0)
        bad = c->log;
    else if (c->out && (plan->out = util_file_open_output(c->out, UTIL_FILE_TRUNC, &why)) < 0)
        bad = c->out;
    if (!bad)
        return 0;
    int err = errno;
    util_error("cannot write '%s': %s", bad, why);
    return errno = err, -1;
}

static void close_captures(struct exec_plan *plan)
{
    if (plan->log >= 0)
        close(plan->log);
    if (plan->out >= 0)
        close(plan->out);
    plan->log = plan->out = -1;
}

/* fd as the child's descriptor `to`. Where it already is `to` (the caller's own was closed, and
 * the log's open took its number) dup2 does nothing and its close-on-exec stayed: the program
 * started with its standard output closed, and a check with its own closed read the benchmark's
 * text as damaged events and drained a healthy node. */
static void onto(int fd, int to)
{
    if (fd == to)
        fcntl(to, F_SETFD, 0);
    else
        dup2(fd, to);
}

/* In the child, after fork: only async-signal-safe calls until exec. */
static void exec_child(const struct util_child *c, const struct exec_plan *plan, int errfd,
                       pid_t parent)
{
    setsid(); /* its own session: ranks that take process groups of their own stay in it */
    /* dies with us, even by SIGKILL; the parent may have died before this line */
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (getppid() != parent)
        _exit(127);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    signal(SIGPIPE, SIG_DFL); /* topotune ignores it (a closed stdout is a write error) */
    /* no file it writes grows past UTIL_CHILD_MAX_FILE_BYTES: a rank printing in a loop fills
     * its log at hundreds of MB a second, and a sweep's deadline is minutes (never raised) */
    signal(SIGXFSZ, SIG_DFL);
    struct rlimit fsize;
    if (!getrlimit(RLIMIT_FSIZE, &fsize) && fsize.rlim_cur > plan->max_file) {
        fsize.rlim_cur = plan->max_file;
        setrlimit(RLIMIT_FSIZE, &fsize);
    }
    int fd = plan->log >= 0 ? plan->log : open("/dev/null", O_WRONLY | O_CLOEXEC);
    int in = open("/dev/null", O_RDONLY);
    int out = plan->out >= 0 ? plan->out : fd;
    if (out < 0) /* never the parent's stdout: the result file is what the caller parses */
        out = fd >= 0 ? fd : open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (fd >= 0)
        onto(fd, STDERR_FILENO);
    if (out >= 0)
        onto(out, STDOUT_FILENO);
    if (in >= 0)
        onto(in, STDIN_FILENO);
    if (plan->path)
        execve(plan->path, c->argv, plan->envp);
    int err = plan->path ? errno : plan->err;
    if (write(errfd, &err, sizeof(err)) < 0)
        _exit(127);
    _exit(127);
}

/*
 * From /proc, the pids (at most max) whose parent is ppid, or (ppid 0) which are in session sid
 * and not zombies.
 */
static int scan_proc(pid_t ppid, pid_t sid, pid_t *out, int max)
{
    DIR *d = opendir("/proc");
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d)) && n < max;) {
        pid_t pid = (pid_t)atoi(e->d_name);
        char path[64], buf[512];
        if (pid <= 0)
            continue;
        snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t len = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
        if (fd >= 0)
            close(fd);
        if (len <= 0)
            continue;
        buf[len] = '\0';
        const char *rp = strrchr(buf, ')'); /* the command may hold spaces and parentheses */
        int p = 0, g = 0, sess = 0;
        char state;
        if (!rp || sscanf(rp + 1, " %c %d %d %d", &state, &p, &g, &sess) != 4)
            continue;
        if (ppid ? p == ppid : sess == sid && state != 'Z')
            out[n++] = pid;
    }
    if (d)
        closedir(d);
    return n;
}

static int children_of_me(pid_t *out, int max)
{
    return scan_proc(getpid(), 0, out, max);
}

/* Our children from before the run (started some other way): never the run's orphans. */
static pid_t before[MAX_LIVE * 4];
static int nbefore;

static int in_list(pid_t pid, const pid_t *list, int n)
{
    for (int i = 0; i < n; i++)
        if (list[i] == pid)
            return 1;
    return 0;
}

int util_child_start(struct util_child *c)
{
    int pipefd[2];
    c->exec_errno = c->capture_errno = 0;
    c->lost = 0;
    c->stuck = 0;
    c->left_behind = 0;
    c->timed_out = 0;
    c->exit_code = -1;
    c->signal = 0;
    c->wall_s = 0;                 /* nothing ran until the fork */
    if (!c->argv || !c->argv[0]) { /* a launch line its builder refused: nothing to run */
        c->exec_errno = EINVAL;
        return -1;
    }
    nbefore = children_of_me(before, MAX_LIVE * 4);
    struct exec_plan plan = {NULL, build_env(c->env), 0, -1, -1, max_file_bytes()};
    plan.path = resolve(c->argv[0], &plan.err);
    int captured = plan.envp ? open_captures(c, &plan) : 0;
    if (!plan.envp || captured || pipe2(pipefd, O_CLOEXEC)) {
        c->exec_errno = plan.envp ? errno : ENOMEM;
        c->capture_errno = captured ? c->exec_errno : 0;
        close_captures(&plan);
        free(plan.envp), free(plan.path);
        return -1;
    }
    pid_t parent = getpid();
    c->wall_s = util_clock_s();
    c->pid = fork();
    if (c->pid < 0) {
        c->exec_errno = errno;
        c->wall_s = 0;
        close(pipefd[0]);
        close(pipefd[1]);
        close_captures(&plan);
        free(plan.envp), free(plan.path);
        return -1;
    }
    if (c->pid == 0)
        exec_child(c, &plan, pipefd[1], parent);
    close_captures(&plan);
    free(plan.envp), free(plan.path);
    track(c->pid); /* a kill before the child's setsid misses: util_child_wait kills again */
    close(pipefd[1]);
    int err = 0;
    ssize_t n;
    while ((n = read(pipefd[0], &err, sizeof(err))) < 0 && errno == EINTR)
        ;
    close(pipefd[0]);
    if (n == (ssize_t)sizeof(err)) { /* exec failed: nothing of the program ran */
        c->exec_errno = err;
        waitpid(c->pid, NULL, 0);
        untrack(c->pid);
        c->wall_s = util_clock_s() - c->wall_s;
        return -1;
    }
    return 0;
}

/*
 * Orphans reparented to us (we are their subreaper) that left the child's
 * process group (setsid): killed and reaped too, so none outlives its run.
 * Other live children of ours, and those we had before the run, are left alone.
 * Reaped only when dead already: one asleep where SIGKILL does not reach would hold a blocking
 * wait for as long as it sleeps (util_child_wait's loop tries again, for a while).
 */
static int kill_orphans(int *alive)
{
    pid_t kids[MAX_LIVE * 4];
    int n = children_of_me(kids, MAX_LIVE * 4), found = 0;
    *alive = 0;
    for (int i = 0; i < n; i++)
        if (!tracked(kids[i]) && !in_list(kids[i], before, nbefore) &&
            kill(kids[i], SIGKILL) == 0) {
            pid_t r = waitpid(kids[i], NULL, WNOHANG);
            found += r >= 0;
            *alive += r == 0;
        }
    return found;
}

/* SIGKILL to every live process of session sid; how many there were. */
static int kill_session(pid_t sid)
{
    pid_t pids[MAX_LIVE * 4];
    int n = scan_proc(0, sid, pids, MAX_LIVE * 4);
    for (int i = 0; i < n; i++)
        kill(pids[i], SIGKILL);
    return n;
}

int util_child_wait(struct util_child *c)
{
    double start = c->wall_s, term_at = 0, kill_at = 0;
    double kill_wait = c->kill_wait_s > 0 ? c->kill_wait_s : UTIL_CHILD_KILL_WAIT_S;
    int status = 0, reaped = 0;
    for (;;) {
        pid_t r = waitpid(c->pid, &status, WNOHANG);
        if (r == c->pid) {
            reaped = 1;
            break;
        }
        if (r < 0 && errno != EINTR)
            break; /* ECHILD: someone else reaped it; its status is unknown, never "exit 0" */
        double t = util_clock_s();
        if (c->timeout_s > 0 && !c->timed_out && t - start > c->timeout_s) {
            c->timed_out = 1;
            term_at = t;
            kill(-c->pid, SIGTERM);
        }
        /* interrupted: it may have started as the signal came, unknown to the handler */
        if (interrupted || (c->timed_out && t - term_at > c->grace_s)) {
            kill(-c->pid, SIGKILL);
            kill_at = kill_at > 0 ? kill_at : t;
        }
        if (kill_at > 0 && t - kill_at > kill_wait) { /* in the kernel, beyond any signal */
            c->stuck = 1;
            break;
        }
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    /*
     * Whatever is left of its session (grandchildren, MPI ranks in process groups of their own)
     * goes with it, and is waited for: ranks that outlived their launcher would otherwise run on,
     * reparented, next to the next run. The session keeps its number while a member lives, so
     * the kill cannot reach another's.
     */
    for (double until = util_clock_s() + (c->stuck ? 0 : 2);;) { /* stuck: once, no wait */
        int left = kill(-c->pid, SIGKILL) == 0, alive;
        left += kill_session(c->pid);
        int orphans = kill_orphans(&alive);
        c->left_behind = left > 0 || alive > 0;
        if ((!orphans && !left) || util_clock_s() >= until)
            break;
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    untrack(c->pid);
    c->wall_s = util_clock_s() - start;
    c->lost = !reaped && !c->stuck;
    if (reaped && WIFEXITED(status))
        c->exit_code = WEXITSTATUS(status);
    else if (reaped && WIFSIGNALED(status))
        c->signal = WTERMSIG(status);
    return 0;
}

int util_child_run(struct util_child *c)
{
    if (util_child_start(c))
        return -1;
    return util_child_wait(c);
}

/* 1 when the environment pid started with holds the entry marker, whole. */
static int has_marker(pid_t pid, const char *marker)
{
    char path[64], buf[8192];
    size_t mlen = strlen(marker), have = 0;
    snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC), found = 0;
    if (fd < 0 || mlen >= sizeof(buf) / 2) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    for (ssize_t got; !found && (got = read(fd, buf + have, sizeof(buf) - have)) > 0;) {
        have += (size_t)got;
        size_t at = 0; /* entries end in NUL; an unfinished one waits for more */
        for (char *nul; !found && (nul = memchr(buf + at, '\0', have - at)); at = nul + 1 - buf)
            found = (size_t)(nul - (buf + at)) == mlen && !memcmp(buf + at, marker, mlen);
        if (at == 0 && have == sizeof(buf)) /* one entry longer than the buffer: not ours */
            at = have;
        memmove(buf, buf + at, have - at);
        have -= at;
    }
    close(fd);
    return found;
}

/* The processes of session sid (at most max) that carry marker. */
static int marked_in_session(pid_t sid, const char *marker, pid_t *out, int max)
{
    int n = sid > 1 ? scan_proc(0, sid, out, max) : 0, k = 0;
    for (int i = 0; i < n; i++)
        if (has_marker(out[i], marker))
            out[k++] = out[i];
    return k;
}

int util_child_end_session(pid_t sid, const char *marker, double grace_s, int *killed)
{
    pid_t pids[MAX_LIVE * 4];
    int n = marked_in_session(sid, marker, pids, MAX_LIVE * 4);
    *killed = 0;
    for (int i = 0; i < n; i++)
        kill(pids[i], SIGTERM);
    double until = util_clock_s() + grace_s;
    while (n && marked_in_session(sid, marker, pids, MAX_LIVE * 4) && util_clock_s() < until) {
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    for (until = util_clock_s() + 5; n && util_clock_s() < until; *killed = 1) {
        int left = marked_in_session(sid, marker, pids, MAX_LIVE * 4);
        if (!left)
            break;
        for (int i = 0; i < left; i++)
            kill(pids[i], SIGKILL);
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return n;
}
