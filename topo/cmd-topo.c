/* SPDX-License-Identifier: MIT */
/* `topotune topo`: map this machine or a topology file; print the summary and matrix, or JSON. */
#include "topo/topo.h"
#include "util/error.h"
#include "util/json.h"
#include "util/log.h"
#include "util/opts.h"

#include <stdlib.h>

struct topo_options {
    const char *input;
    const char *json; /* NULL: no JSON; "-": stdout */
    int matrix;
};

static const char topo_usage[] = "[--input FILE] [--json [FILE]] [--matrix]";

int cmd_topo(int argc, char **argv)
{
    struct topo_options o = {0};
    const struct util_opt opts[] = {
        {"input", 'i', UTIL_OPT_STRING, &o.input, "FILE",
         "hwloc XML export or NCCL topology XML instead of this machine"},
        {"json", 0, UTIL_OPT_OPTSTRING, &o.json, "FILE",
         "write the topology JSON (stdout: - or none)"},
        {"matrix", 'm', UTIL_OPT_FLAG, &o.matrix, NULL, "print only the GPU/NIC matrix"},
        {0},
    };
    char **pos = calloc((size_t)argc + 1, sizeof(char *));
    int npos = 0;
    int rc = util_opts_parse("topotune topo", topo_usage, opts, argc, argv, pos, &npos);
    free(pos);
    if (rc)
        return rc > 0 ? 0 : 2;
    if (npos) {
        error("'topotune topo' takes no arguments: use --input FILE to read a topology file");
        return 2;
    }
    struct topo t;
    topo_init(&t);
    rc = topo_load(&t, o.input);
    if (rc) {
        topo_release(&t);
        return rc == UTIL_ENOMEM ? 1 : 2;
    }
    if (!t.nvlink_known && t.ngpus)
        warning("'%s' does not describe NVLink: GPU pairs show their PCIe path",
                o.input ? o.input : "this machine");
    int exit_code = 0;
    if (o.json) {
        json_t *j = topo_to_json(&t);
        if (util_json_write(o.json, j))
            exit_code = 1;
        json_decref(j);
    } else {
        if (!o.matrix)
            topo_print_summary(&t, stdout);
        topo_print_matrix(&t, stdout);
    }
    topo_release(&t);
    return exit_code;
}
