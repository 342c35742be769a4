/* SPDX-License-Identifier: MIT */
/* `topotune-bench`: the all_reduce benchmark program, one process per rank. */
#include "bench/bench.h"
#include "util/mem.h"

int main(int argc, char **argv)
{
    util_mem_init();
    return bench_main(argc, argv);
}
