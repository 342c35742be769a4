/* SPDX-License-Identifier: MIT */
/* `topotune-bench`: the all_reduce benchmark program, one process per rank. */
#include "bench/bench.h"

int main(int argc, char **argv)
{
    return bench_main(argc, argv);
}
