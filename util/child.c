/* SPDX-License-Identifier: MIT */
/* Supervised children: process groups, deadlines, SIGTERM then SIGKILL, reaping. */
#include "util/child.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_LIVE 64

/* Process groups of live children, for the signal handler: plain ints, no locks. */
static volatile sig_atomic_t live[MAX_LIVE];

static void track(pid_t pgid)
{
    for (int i = 0; i < MAX_LIVE; i++)
        if (!live[i]) {
            live[i] = pgid;
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
        if (live[i] == pgid)
            live[i] = 0;
}

void util_child_kill_all(void)
{
    for (int i = 0; i < MAX_LIVE; i++)
        if (live[i])
            kill(-(pid_t)live[i], SIGKILL);
}

static void on_signal(int sig)
{
    util_child_kill_all();
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
}

static double now(void)
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
    char *path;  /* argv[0] resolved through PATH */
    char **envp; /* this process's environment with c->env added or replacing */
    int err;     /* the program was not found: reported as the exec's errno */
};

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
    char **envp = calloc(n + k + 1, sizeof(char *));
    if (!envp)
        return NULL;
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
static char *resolve(const char *argv0, int *err)
{
    if (strchr(argv0, '/'))
        return strdup(argv0);
    const char *path = getenv("PATH");
    *err = ENOENT;
    for (const char *p = path && *path ? path : "/usr/local/bin:/usr/bin:/bin"; *p;) {
        size_t len = strcspn(p, ":");
        char *cand = malloc(len + strlen(argv0) + 2);
        if (!cand)
            return NULL;
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

/* In the child, after fork: only async-signal-safe calls until exec. */
static void exec_child(const struct util_child *c, const struct exec_plan *plan, int errfd)
{
    setpgid(0, 0);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    int fd = open(c->log ? c->log : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int in = open("/dev/null", O_RDONLY);
    int out = c->out ? open(c->out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644) : fd;
    if (out < 0) /* never the parent's stdout: the result file is what the caller parses */
        out = fd >= 0 ? fd : open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (fd >= 0)
        dup2(fd, STDERR_FILENO);
    if (out >= 0)
        dup2(out, STDOUT_FILENO);
    if (in >= 0)
        dup2(in, STDIN_FILENO);
    if (plan->path)
        execve(plan->path, c->argv, plan->envp);
    int err = plan->path ? errno : plan->err;
    if (write(errfd, &err, sizeof(err)) < 0)
        _exit(127);
    _exit(127);
}

/* The pids whose parent is this process now (at most max), from /proc. */
static int children_of_me(pid_t *out, int max)
{
    DIR *d = opendir("/proc");
    pid_t me = getpid();
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
        int ppid = 0;
        char state;
        if (rp && sscanf(rp + 1, " %c %d", &state, &ppid) == 2 && ppid == me)
            out[n++] = pid;
    }
    if (d)
        closedir(d);
    return n;
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
    c->exec_errno = 0;
    c->lost = 0;
    c->timed_out = 0;
    c->exit_code = -1;
    c->signal = 0;
    c->wall_s = now();
    nbefore = children_of_me(before, MAX_LIVE * 4);
    struct exec_plan plan = {NULL, build_env(c->env), 0};
    plan.path = resolve(c->argv[0], &plan.err);
    if (!plan.envp || pipe2(pipefd, O_CLOEXEC)) {
        c->exec_errno = plan.envp ? errno : ENOMEM;
        free(plan.envp), free(plan.path);
        return -1;
    }
    c->pid = fork();
    if (c->pid < 0) {
        c->exec_errno = errno;
        close(pipefd[0]);
        close(pipefd[1]);
        free(plan.envp), free(plan.path);
        return -1;
    }
    if (c->pid == 0)
        exec_child(c, &plan, pipefd[1]);
    free(plan.envp), free(plan.path);
    setpgid(c->pid, c->pid); /* also here: no race with the first kill */
    track(c->pid);
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
        c->wall_s = now() - c->wall_s;
        return -1;
    }
    return 0;
}

/*
 * Orphans reparented to us (we are their subreaper) that left the child's
 * process group (setsid): killed and reaped too, so none outlives its run.
 * Other live children of ours, and those we had before the run, are left alone.
 */
static void kill_orphans(void)
{
    pid_t kids[MAX_LIVE * 4];
    int n = children_of_me(kids, MAX_LIVE * 4);
    for (int i = 0; i < n; i++)
        if (!tracked(kids[i]) && !in_list(kids[i], before, nbefore) && kill(kids[i], SIGKILL) == 0)
            waitpid(kids[i], NULL, 0);
}

int util_child_wait(struct util_child *c)
{
    double start = c->wall_s, term_at = 0;
    int status = 0, reaped = 0;
    for (;;) {
        pid_t r = waitpid(c->pid, &status, WNOHANG);
        if (r == c->pid) {
            reaped = 1;
            break;
        }
        if (r < 0 && errno != EINTR)
            break; /* ECHILD: someone else reaped it; its status is unknown, never "exit 0" */
        double t = now();
        if (c->timeout_s > 0 && !c->timed_out && t - start > c->timeout_s) {
            c->timed_out = 1;
            term_at = t;
            kill(-c->pid, SIGTERM);
        }
        if (c->timed_out && t - term_at > c->grace_s)
            kill(-c->pid, SIGKILL);
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    /* Whatever is left of the group (grandchildren) goes with it. */
    kill(-c->pid, SIGKILL);
    untrack(c->pid);
    kill_orphans();
    c->wall_s = now() - start;
    c->lost = !reaped;
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
