/* SPDX-License-Identifier: MIT */
/* `topotune-bench`: the all_reduce benchmark program, one process per rank. */
#include "bench/bench.h"
#include "util/mem.h"

#include <signal.h>

int main(int argc, char **argv)
{
    util_mem_init();
    /* a reader that went away (| head) is a write error, exit 1 with its message, as the
     * page says: not a death by SIGPIPE a script cannot tell from a crash */
    signal(SIGPIPE, SIG_IGN);
    return bench_main(argc, argv);
}
