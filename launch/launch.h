/* SPDX-License-Identifier: MIT */
/*
 * Starting one program as many processes: the one place that builds direct,
 * mpirun and srun command lines, their environment, and the host lists they
 * take. The sweep, `topotune bench`, the cluster gather and doctor all launch
 * through it, so every launch follows the same rules:
 *  - the variables of a launch are set in the launcher's own environment (the
 *    caller passes them to util_child's env) and forwarded by name: `-x NAME`
 *    for mpirun, `--export=ALL` for srun, so a value is never re-parsed by a
 *    launcher (srun splits --export lists on commas);
 *  - mpirun runs as root with --allow-run-as-root and may place more ranks
 *    than cores (--oversubscribe): benchmark ranks wait on GPUs or the network;
 *  - with a host list, every host gets the same number of consecutive ranks;
 *    a list longer than 32 KiB goes in a temporary hostfile (mpirun's
 *    --hostfile, srun's -w FILE): Linux refuses an argument of 128 KiB, a
 *    few thousand host names.
 */
#ifndef LAUNCH_LAUNCH_H
#define LAUNCH_LAUNCH_H

struct launch {
    const char *launcher; /* "direct", "mpirun" or "srun" */
    int np;               /* processes in all; 0 with mpirun: one per node of the allocation */
    const char *hosts;    /* comma-separated host names (srun: nodes of the allocation, -w), or
                             NULL (mpirun: this host or Slurm's; srun: what Slurm places) */
    char *const *env;     /* NAME=VALUE for every rank (NULL-terminated, may be NULL) */
    int tag_output;       /* mpirun: --tag-output ("[1,R]<stdout>:" before each piece rank R
                             writes; Open MPI 5 adds a space) */
};

/* 1 when launcher is "direct", "mpirun" or "srun". */
int launch_known(const char *launcher);

/*
 * The command line that starts program (a NULL-terminated argv) under l.
 * Returns a NULL-terminated argv owned by the caller (launch_argv_free, which
 * also removes the hostfile it names), or NULL
 * when l is invalid: an unknown launcher, direct with np > 1, np not a multiple
 * of the hosts.
 */
char **launch_argv(const struct launch *l, char *const *program);
void launch_argv_free(char **argv);

/* The number of comma-separated names in hosts (0 for NULL or ""). */
int launch_count_hosts(const char *hosts);

/* Every name of the comma-separated list a host name (what mpirun's --host and a hostfile
 * take: letters, digits, '.', '-', '_', at most 255), none twice in any case (DNS ignores it),
 * and not Slurm's node[..] form: else says which, with the fix, and returns UTIL_EUSAGE. */
int launch_check_names(const char *hosts);

/* 1 when this process runs inside a Slurm allocation. */
int launch_in_slurm(void);

/* 0 when launcher can start ranks from here (srun outside an allocation makes its own); else
 * says why and returns UTIL_EENV: mpirun or srun is not on PATH. */
int launch_usable(const char *launcher);

/*
 * Checks a command's --hosts LIST and --allocation flag: not both, a list with
 * names in it, an allocation only inside Slurm. Returns 0, or UTIL_EUSAGE after
 * an error naming the flag and the fix.
 */
int launch_check_nodes(const char *hosts, int allocation);

/*
 * Open MPI settings for its TCP traffic between hosts: off container bridges and
 * veths (docker0 has the same 172.17.0.0/16 on every node and joins none of
 * them), and on IPv4 only: Open MPI 4.1's TCP transport at times hangs in its
 * first exchange when a peer offers two addresses on one interface, its IPv4
 * one and the IPv6 link-local one every interface has. For oob always
 * (OMPI_MCA_oob_tcp_if_exclude, OMPI_MCA_oob_tcp_disable_ipv6_family=1), for
 * btl when asked (OMPI_MCA_btl_tcp_if_exclude, OMPI_MCA_btl_tcp_disable_family=6),
 * each kind only when the user has set none of its include, exclude and family
 * variables. The names are docker0, virbr0 and this machine's own virtual
 * interfaces. Appends at most LAUNCH_TCP_ENV_MAX malloc'd NAME=VALUE strings to
 * env; returns how many.
 */
#define LAUNCH_TCP_ENV_MAX 4
int launch_tcp_env(char **env, int btl);

/*
 * The hosts of the comma-separated list that a launcher's log blames: with ppn
 * ranks on each host in list order (launch_argv's --map-by ppr:PPN:node; 0 when
 * not known), the hosts of the ranks Open MPI names ("Process name:
 * [[J,1],R]": a rank that exited non-zero or died, which names no host); else
 * those named on a line that says what failed (ssh's, the rsh agent's, Open
 * MPI's own words), else those named anywhere. Appends "h1, h2" to out.
 */
struct util_buf;
void launch_hosts_blamed(const char *log_path, const char *hosts, int ppn, struct util_buf *out);

#endif
