/* SPDX-License-Identifier: MIT */
/*
 * Child processes with a contract: each runs in its own session and process group with an
 * added environment (built before fork; the child only calls execve), its stdout and stderr in one
 * log file, and a deadline on the monotonic clock; on expiry SIGTERM, then SIGKILL after a grace
 * period, to the whole group. Exec failures come back through a close-on-exec pipe, so "mpirun not
 * found" differs from "mpirun exited 127". Every live child is registered: util_child_kill_all
 * (from a signal handler too) ends them all; every child gets SIGKILL when this process dies.
 */
#ifndef UTIL_CHILD_H
#define UTIL_CHILD_H

#include <sys/types.h>

/* The largest file a child (and what it starts) may write: its log, NCCL's, a /dev/shm segment.
 * Beyond it the writer gets SIGXFSZ, so a child that prints for ever ends as a crash instead of
 * filling the disk before its deadline. */
#define UTIL_CHILD_MAX_FILE_BYTES (4ull << 30)

/* How long a child's end is waited for after SIGKILL by default: a CUDA process's teardown takes
 * seconds; one that takes longer sleeps where no signal reaches, and a supervisor that waited for
 * it would hang with it. */
#define UTIL_CHILD_KILL_WAIT_S 5.0
/* Why a child (or what it left) outlived SIGKILL, in the words every caller reports it with. */
#define UTIL_CHILD_LEFT_WHY                                                                        \
    "still tearing down, or asleep in the GPU driver: see the kernel log for Xid errors"

struct util_child {
    /* set by the caller */
    char **argv;        /* argv[0] is looked up in PATH */
    char **env;         /* NAME=VALUE added to (or replacing in) this process's environment */
    const char *log;    /* stdout and stderr go here (created or truncated); NULL: /dev/null */
    const char *out;    /* when set, stdout alone goes here instead (a result to parse) */
    double timeout_s;   /* 0: none */
    double grace_s;     /* between SIGTERM and SIGKILL */
    double kill_wait_s; /* after SIGKILL, its end waited for so long (0: UTIL_CHILD_KILL_WAIT_S) */
    /* set by util_child_start / util_child_wait */
    pid_t pid;
    int exec_errno;    /* the exec failed with this errno: nothing ran */
    int capture_errno; /* the log or result file could not be opened (a planted link, a
                        * directory): nothing ran; exec_errno holds it too */
    int timed_out;     /* the deadline passed and the group was killed */
    int exit_code;     /* when it exited, else -1 */
    int lost;          /* it was reaped by someone else: how it ended is unknown (exit_code -1) */
    int signal;        /* when a signal ended it (ours after a timeout included), else 0 */
    int stuck;         /* SIGKILL did not end it within kill_wait_s: asleep in the kernel where no
                        * signal reaches (a GPU driver's or a file system's hang), left there
                        * unreaped to die when it wakes; exit_code -1 */
    int left_behind;   /* processes of its group, its session or orphaned by it were still there
                        * when the wait gave up on them (2 s after its end; at once when stuck) */
    double wall_s;
};

/*
 * Makes this process the reaper of orphaned descendants (so grandchildren that
 * outlive their parent come back to us) and installs SIGINT/SIGTERM handlers
 * that kill every registered child's group before the process exits with 128
 * plus the signal. Call once before starting children.
 */
void util_child_setup(void);

/*
 * util_child_setup for a supervisor that must leave nothing behind and say what it stopped:
 * SIGINT, SIGTERM and SIGHUP kill every registered group at once but do not exit; the wait in
 * progress kills and reaps what is left of the child's session and returns, and the caller asks
 * util_child_interrupted() (a second signal exits at once). A watchdog process, told of every
 * child started and ended, kills every process of the live children's sessions when this
 * process dies, by SIGKILL too; every child also has SIGKILL as its parent-death signal. Call once
 * before starting children; calling it again does nothing.
 */
void util_child_supervise(void);

/* Seconds on CLOCK_MONOTONIC: the clock a child's timeout_s is kept on. */
double util_clock_s(void);

/* The signal util_child_supervise deferred, else 0. Async-signal-safe. */
int util_child_interrupted(void);

/*
 * Ends what is left of session sid (not ours: the run of a sweep that died before it): SIGTERM,
 * then SIGKILL after grace_s; waits until no such process is left (at most 5 s more). Only
 * processes whose environment (/proc/PID/environ) holds the entry marker ("NAME=VALUE", exact)
 * are signalled: a session number read from a file may name anyone's. Returns how many
 * processes it found (0: none); *killed is 1 when SIGKILL was needed.
 */
int util_child_end_session(pid_t sid, const char *marker, double grace_s, int *killed);

/* Starts c. Returns 0, or -1 when it could not start (exec_errno tells why: EINVAL for no
 * argv, as a launch line that could not be built gives). */
int util_child_start(struct util_child *c);

/*
 * Waits for c to end, enforcing its deadline; then kills whatever is left of
 * its process group and session and the orphans it left to us (never another live child
 * of ours, never a process we did not start through it). A child that SIGKILL does not end
 * within kill_wait_s is left (c->stuck), and so are orphans it does not end: this returns
 * anyway. Returns 0.
 */
int util_child_wait(struct util_child *c);

/* util_child_start then util_child_wait. */
int util_child_run(struct util_child *c);

/* The file a child started as name would run, as util_child_start finds it: name itself when it
 * holds a '/', else the first executable of that name in PATH (unset: /usr/local/bin:/usr/bin:
 * /bin). A new string, or NULL when there is none. */
char *util_child_which(const char *name);

/* SIGKILL to every registered child's process group. Async-signal-safe. */
void util_child_kill_all(void);

#endif
