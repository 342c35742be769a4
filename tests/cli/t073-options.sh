#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every number an option takes is checked by util/opts from its type and range in the command's
# table: no command parses or checks one by hand (no strtol, strtod or atoi left in cli/ or
# bench/options.c), and each bad value is refused with exit 2 (topotune-bench: 6), naming the
# option, the value and the range, whatever the command. An empty value is refused everywhere
# (`sweep --seed ''` was taken as 0, `topotune-bench -n ''` refused).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
: "${TOPOTUNE_SRC:?set by ctest: the source tree}"
BENCH=$TOPOTUNE_BIN/topotune-bench
cd "$TEST_TMP" || exit 1

hand=$(cd "$TOPOTUNE_SRC" && grep -nE '\b(strto(l|ll|ul|ull|d|f)|ato(i|l|f))[[:space:]]*\(' \
    cli/*.c bench/options.c)
check "no number parsed by hand in cli/ or bench/options.c: ${hand:-none}" test -z "$hand"

# refused CODE "ARGS" "TEXT": the command line (word-split) exits CODE with TEXT on stderr.
refused() {
    local code=$1 args=$2 text=$3
    # shellcheck disable=SC2086 # the arguments are words
    expect_exit "$code" "$args refused" -- $args
    expect_stderr_has "$text" "$args: the option, the value and the range named"
}
refused 2 "$TOPOTUNE sweep --space x.json --seed=" "invalid value '' for --seed: expected a whole number from 0 to 1073741824"
refused 2 "$TOPOTUNE sweep --space x.json --repeat 0" "invalid value '0' for --repeat: expected a whole number from 1 to 100"
refused 2 "$TOPOTUNE sweep --space x.json --timeout nan" "invalid value 'nan' for --timeout: expected a number from"
refused 2 "$TOPOTUNE sweep --space x.json --strategy best" "invalid value 'best' for --strategy: expected grid, halving or descent"
refused 2 "$TOPOTUNE survey --out o --backend sim --cluster c.json --size 17G" "invalid value '17G' for --size: expected bytes from 1 to 16G"
refused 2 "$TOPOTUNE survey --out o --backend sim --cluster c.json --tolerance 0.95" "invalid value '0.95' for --tolerance: expected a number from 0.01 to 0.9"
refused 2 "$TOPOTUNE survey --out o --pairs some" "invalid value 'some' for --pairs: expected matchings or all"
refused 2 "$TOPOTUNE compare x.json --nodes 1,0" "invalid value '1,0' for --nodes: expected whole numbers from 1 to 4096"
refused 2 "$TOPOTUNE compare x.json --at 2T" "invalid value '2T' for --at: expected bytes from 4 to 1024G"
refused 2 "$TOPOTUNE predict --input x.json --nodes 1e3" "invalid value '1e3' for --nodes: expected a whole number from 1 to 4096"
refused 2 "$TOPOTUNE predict --input x.json -b -1" "invalid value '-1' for -b (--minbytes): expected bytes from 0 to"
refused 2 "$TOPOTUNE verify p --np 0" "invalid value '0' for --np: expected a whole number from 1 to 65536"
refused 2 "$TOPOTUNE doctor --timeout 0" "invalid value '0' for --timeout: expected a number from 0.001 to 604800"
refused 2 "$TOPOTUNE calibrate --runs r --out o --fit-max 0" "invalid value '0' for --fit-max: expected bytes from 1 to 1024G"
refused 2 "$TOPOTUNE bench --np 5000" "invalid value '5000' for --np: expected a whole number from 1 to 4096"
refused 2 "$TOPOTUNE profiles show c v0" "invalid version 'v0': expected vN, N from 1 to 1000000"
refused 2 "$TOPOTUNE run --backend sim" "invalid value 'sim' for --backend: expected nccl or mpi"
refused 6 "$BENCH --iters=" "invalid value '' for -n (--iters): expected a whole number from 1 to 1000000000"
refused 6 "$BENCH -c -1" "invalid value '-1' for -c (--check): expected a whole number from 0 to 1000000 (0 disables the check)"
refused 6 "$BENCH -T inf" "invalid value 'inf' for -T (--timeout): expected a number from 0 to 1e+09 (seconds, 0 to disable)"
refused 2 "$TOPOTUNE profiles a b c d e" "unexpected argument 'e'"

# topotune's own -q and -v come off anywhere before "--", never after: those are the command's
# shellcheck disable=SC2016 # the command's shell expands it
expect_exit 0 "-v and --quiet after -- reach the command" -- "$TOPOTUNE" -q env --node --all -- \
    sh -c 'echo "$*"' sh -v --quiet -x
check "the command got -v --quiet -x" test "$(cat "$TEST_TMP/out")" = "-v --quiet -x"
finish
