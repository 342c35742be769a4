/* SPDX-License-Identifier: MIT */
/* Linked into the MPI programs of a sanitized build only (tests/CMakeLists.txt).
 *
 * Open MPI, PMIx and libevent are built without frame pointers, and they keep allocations until
 * exit that lsan.supp must name by library: ASan's fast unwinder stops at their frames, so these
 * programs unwind fully on every allocation. Full unwinding costs seven times the run time of a
 * Jansson-heavy program, so the programs that load no MPI keep the fast one. ASAN_OPTIONS in the
 * environment still takes precedence, flag by flag. */
const char *__asan_default_options(void);

const char *__asan_default_options(void)
{
    return "fast_unwind_on_malloc=0";
}
