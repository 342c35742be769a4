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

/* In the child, after fork: only async-signal-safe calls until exec. */
static void exec_child(const struct util_child *c, int errfd)
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
    for (char **e = c->env; e && *e; e++)
        putenv(*e);
    execvp(c->argv[0], c->argv);
    int err = errno;
    if (write(errfd, &err, sizeof(err)) < 0)
        _exit(127);
    _exit(127);
}

int util_child_start(struct util_child *c)
{
    int pipefd[2];
    c->exec_errno = 0;
    c->timed_out = 0;
    c->exit_code = -1;
    c->signal = 0;
    c->wall_s = now();
    if (pipe2(pipefd, O_CLOEXEC))
        return c->exec_errno = errno, -1;
    c->pid = fork();
    if (c->pid < 0) {
        c->exec_errno = errno;
        close(pipefd[0]);
        close(pipefd[1]);
        return -1;
    }
    if (c->pid == 0)
        exec_child(c, pipefd[1]);
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
 */
static void kill_orphans(pid_t keep)
{
    DIR *d = opendir("/proc");
    pid_t me = getpid();
    for (struct dirent *e; d && (e = readdir(d));) {
        pid_t pid = (pid_t)atoi(e->d_name);
        char path[64], buf[512];
        if (pid <= 0 || pid == keep)
            continue;
        snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
        if (fd >= 0)
            close(fd);
        if (n <= 0)
            continue;
        buf[n] = '\0';
        const char *rp = strrchr(buf, ')'); /* the command may hold spaces and parentheses */
        int ppid = 0;
        char state;
        if (rp && sscanf(rp + 1, " %c %d", &state, &ppid) == 2 && ppid == me &&
            kill(pid, SIGKILL) == 0)
            waitpid(pid, NULL, 0);
    }
    if (d)
        closedir(d);
    while (waitpid(-1, NULL, WNOHANG) > 0)
        ;
}

int util_child_wait(struct util_child *c)
{
    double start = c->wall_s, term_at = 0;
    int status = 0;
    for (;;) {
        pid_t r = waitpid(c->pid, &status, WNOHANG);
        if (r == c->pid)
            break;
        if (r < 0 && errno != EINTR)
            break;
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
    kill_orphans(0);
    c->wall_s = now() - start;
    if (WIFEXITED(status))
        c->exit_code = WEXITSTATUS(status);
    else if (WIFSIGNALED(status))
        c->signal = WTERMSIG(status);
    return 0;
}

int util_child_run(struct util_child *c)
{
    if (util_child_start(c))
        return -1;
    return util_child_wait(c);
}
