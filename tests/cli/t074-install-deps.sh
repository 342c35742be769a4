#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tools/install-deps.sh: 'build' installs what building and running need and nothing of the test
# suite's (no chromium, no PyTorch), 'check' that and what tools/test.sh runs before its tests,
# 'test' and no argument install all of them, only what is missing is
# installed, and another argument is a usage error. dpkg-query, apt-get and sudo are stand-ins on
# PATH that record what would be installed. The build list holds the packages that own the
# pkg-config modules CMakeLists.txt requires and mpicc; run.sh asks for build, test.sh for check,
# then for test in the background while it checks and builds.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
: "${TOPOTUNE_SRC:?set by ctest: the source tree}"
deps=$TOPOTUNE_SRC/tools/install-deps.sh
stubs=$TEST_TMP/bin
mkdir -p "$stubs"
# dpkg-query: the packages in $TEST_TMP/installed are installed, no other
cat >"$stubs/dpkg-query" <<'SH'
#!/usr/bin/env bash
if grep -qxF -- "${!#}" "$TEST_TMP/installed"; then echo 'install ok installed'; else exit 1; fi
SH
# apt-get: 'install' writes its packages, one a line, to $TEST_TMP/apt
cat >"$stubs/apt-get" <<'SH'
#!/usr/bin/env bash
[ "$1" = install ] || exit 0
for a in "$@"; do case $a in install | -*) ;; *) echo "$a" ;; esac; done >"$TEST_TMP/apt"
SH
printf '#!/usr/bin/env bash\nexec "$@"\n' >"$stubs/sudo"
# npm: records its arguments; kubernetes-models counts as installed until the test removes it
cat >"$stubs/npm" <<'SH'
#!/usr/bin/env bash
echo "$*" >"$TEST_TMP/npm"
SH
export TOPOTUNE_NPM_PREFIX=$TEST_TMP/npm-prefix
mkdir -p "$TOPOTUNE_NPM_PREFIX/node_modules/kubernetes-models"
chmod +x "$stubs"/*
export TEST_TMP
deps() { # EXIT ARGS...: install-deps, with only $TEST_TMP/installed installed, exits EXIT
    local want=$1
    shift
    rm -f "$TEST_TMP/apt"
    PATH=$stubs:$PATH expect_exit "$want" "install-deps.sh $*" -- "$deps" "$@"
}
has() { grep -qxF -- "$1" "$TEST_TMP/apt"; }
lacks() { ! grep -qxF -- "$1" "$TEST_TMP/apt"; }

: >"$TEST_TMP/installed"
deps 0 build
cp "$TEST_TMP/apt" "$TEST_TMP/build.list"
for p in build-essential cmake pkg-config libhwloc-dev libjansson-dev libxml2-dev \
    libopenmpi-dev openmpi-bin; do
    check "build installs $p" has "$p"
done
for p in chromium python3-torch libcmocka-dev clang shellcheck slurm-wlm buildah; do
    check "build leaves $p to the tests" lacks "$p"
done

deps 0 test
cp "$TEST_TMP/apt" "$TEST_TMP/test.list"
check "test installs every build package" \
    test -z "$(grep -vxF -f "$TEST_TMP/test.list" "$TEST_TMP/build.list")"
for p in chromium python3-torch libcmocka-dev clang shellcheck groff-base; do
    check "test installs $p" has "$p"
done
deps 0
check "no argument is test" cmp -s "$TEST_TMP/apt" "$TEST_TMP/test.list"
# check: what tools/test.sh needs before its tests (the rest installs while it checks and builds)
deps 0 check
cp "$TEST_TMP/apt" "$TEST_TMP/check.list"
check "check installs every build package" \
    test -z "$(grep -vxF -f "$TEST_TMP/check.list" "$TEST_TMP/build.list")"
for p in libcmocka-dev clang libfuzzer-14-dev clang-format shellcheck cppcheck; do
    check "check installs $p" has "$p"
done
for p in chromium python3-torch slurm-wlm buildah prometheus; do
    check "check leaves $p to the tests" lacks "$p"
done
check "test installs every check package" \
    test -z "$(grep -vxF -f "$TEST_TMP/test.list" "$TEST_TMP/check.list")"

head -n 3 "$TEST_TMP/build.list" >"$TEST_TMP/installed"
deps 0 build
check "only the missing ones are installed" \
    test -z "$(grep -xF -f "$TEST_TMP/installed" "$TEST_TMP/apt")"
cp "$TEST_TMP/test.list" "$TEST_TMP/installed"
deps 0 test
check "nothing installed when nothing is missing" test ! -e "$TEST_TMP/apt"
check "and it says so" grep -q 'already installed' "$TEST_TMP/out"

: >"$TEST_TMP/installed"
deps 2 biuld
check "a usage error installs nothing" test ! -e "$TEST_TMP/apt"
expect_stderr_has "usage: tools/install-deps.sh [build|check|test]" "the usage said"

# The build list against what the build needs, where dpkg knows the files' owners.
owner() { dpkg-query -S "$1" 2>/dev/null | head -n 1 | sed 's/[:,].*//'; }
if command -v dpkg-query >/dev/null && command -v pkg-config >/dev/null; then
    modules=$(sed -n 's/^pkg_check_modules([A-Z0-9_]* REQUIRED IMPORTED_TARGET \([^ )]*\)).*/\1/p' \
        "$TOPOTUNE_SRC/CMakeLists.txt")
    check "CMakeLists.txt requires pkg-config modules" test -n "$modules"
    for m in $modules; do
        pc=$(pkg-config --variable=pcfiledir "$m" 2>/dev/null)/$m.pc
        pkg=$(owner "$pc")
        check "the package of pkg-config module $m ($pkg) is a build package" \
            grep -qxF -- "${pkg:-?}" "$TEST_TMP/build.list"
    done
    mpicc=$(readlink -f "$(command -v mpicc)")
    pkg=$(owner "$mpicc")
    check "mpicc's package ($pkg) is a build package" \
        grep -qxF -- "${pkg:-?}" "$TEST_TMP/build.list"
fi
# kubernetes-models from npm: only for test, only when missing, into TOPOTUNE_NPM_PREFIX
rm -f "$TEST_TMP/npm"
deps 0 test
check "kubernetes-models present: npm not run" test ! -e "$TEST_TMP/npm"
rmdir "$TOPOTUNE_NPM_PREFIX/node_modules/kubernetes-models"
deps 0 build
check "build: npm not run" test ! -e "$TEST_TMP/npm"
deps 0 test
check "test: npm installs kubernetes-models@5 into the prefix" \
    grep -q -- "install --prefix $TOPOTUNE_NPM_PREFIX .*kubernetes-models@5" "$TEST_TMP/npm"
check "run.sh installs the build list" \
    grep -qx 'tools/install-deps.sh build' "$TOPOTUNE_SRC/tools/run.sh"
check "test.sh installs the check list, then the test list" \
    grep -qx 'tools/install-deps.sh check' "$TOPOTUNE_SRC/tools/test.sh"
check "the test list in the background, waited for before the tests" python3 - "$TOPOTUNE_SRC/tools/test.sh" <<'PY'
import sys
text = open(sys.argv[1]).read()
start = text.index('tools/install-deps.sh test >"$work/install-deps.log" 2>&1 &')
wait = text.index('wait "$deps_pid"', start)
assert text.index("ctest", start) > wait, "a ctest runs before the install is waited for"
PY
finish
