#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The man pages say what --help says: every command of 'topotune --help' has its subsection in
# topotune.1, every option that 'topotune CMD --help' prints is in that subsection, and every
# option the page shows (subsections, synopsis, examples, other sections) is one that --help
# prints, so a new option without its text or a removed one still documented fails; the same
# for topotune-bench.1 and 'topotune-bench --help'. Every TOPOTUNE_* variable the sources read
# is under ENVIRONMENT, and only those. Both pages render without a groff warning and through
# man -l. The command lists of docs/design.md (Programs) and the README (Commands) name exactly
# the commands of 'topotune --help'. The checker is tried on a page with an extra option, on a
# help with a new option or command, and on lists with a command missing or one too many.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
: "${TOPOTUNE_SRC:?set by ctest: the source tree}"
man1=$TOPOTUNE_SRC/docs/man/topotune.1
man_bench=$TOPOTUNE_SRC/docs/man/topotune-bench.1
helps=$TEST_TMP/help
mkdir -p "$helps"

# The checker. Options are read loosely from --help (any word starting with - or -- and a
# letter), so a change of layout does not matter; roff escapes are undone before the page's
# words are read the same way. It prints "ok: WHAT" or "FAIL: WHAT" per check.
cat >"$TEST_TMP/man.py" <<'PY'
import os, re, sys

# an option: - or -- then a letter, at the start of a word (after a space, bracket, bar, quote)
OPTION = re.compile(r"(?<![^\s\[(|'\"{,])(--?[A-Za-z][A-Za-z0-9_-]*)")
GLOBAL = {"-q", "-v"}  # taken by topotune before the command, anywhere on the line


def options(text):
    return {o.rstrip("-") for o in OPTION.findall(text)}


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def commands(top_help):
    """The command names listed under 'commands:' in topotune --help."""
    names, inside = [], False
    for line in top_help.splitlines():
        if line.strip().lower().startswith("commands"):
            inside = True
            continue
        if inside:
            m = re.match(r"\s+([a-z][a-z0-9-]*)\s{2,}\S", line)
            if m:
                names.append(m.group(1))
            elif not line.strip() and names:
                break
    return names


def unroff(line):
    """A roff source line as plain text: escapes undone, the request name dropped."""
    line = re.sub(r"\\f(\[[^]]*\]|\(..|.)", "", line)  # fonts
    line = re.sub(r"\\\*(\[[^]]*\]|\(..|.)", " ", line)  # strings
    line = re.sub(r"\\(\(..|\[[^]]*\])", " ", line)  # special characters
    line = line.replace("\\-", "-").replace("\\e", "\\").replace("\\ ", " ").replace("\\~", " ")
    line = re.sub(r"\\[&|^%:c]", "", line)
    if line.startswith((".", "'")):
        line = re.sub(r"^[.']\s*\S+", "", line)
    return line.replace('"', " ")


def sections(path):
    """[(SH title, SS title or None, [plain lines])] in page order; comments dropped."""
    out, sh, ss = [], None, None
    for raw in read(path).splitlines():
        if raw.startswith(('.\\"', "'\\\"")):
            continue
        m = re.match(r"^\.(SH|SS)\s+(.*)$", raw)
        if m:
            title = unroff(m.group(2)).strip()
            if m.group(1) == "SH":
                sh, ss = title.upper(), None
            else:
                ss = title
            out.append((sh, ss, []))
            continue
        if out:
            out[-1][2].append(unroff(raw))
    return out


def section_text(secs, sh, ss=None, whole=False):
    return "\n".join(l for s, t, lines in secs if s == sh and (whole or t == ss) for l in lines)


def command_lines(text, program):
    """Each shell command line (continuations joined) as the words after PROGRAM."""
    text = re.sub(r"\\\s*\n", " ", text)
    for line in text.splitlines():
        words = line.split()
        for i, w in enumerate(words):
            if w == program:
                rest = []
                for x in words[i + 1:]:
                    if x in ("|", "||", "&&", ";") or x.startswith("#"):
                        break
                    rest.append(x)
                yield rest
                break


def report(ok, what):
    print(("ok: " if ok else "FAIL: ") + what)


def compare(what, help_opts, page_opts, forward=True):
    missing = sorted(help_opts - page_opts)
    extra = sorted(page_opts - help_opts)
    if forward:
        report(not missing, f"{what}: --help options on the page" +
               (f"; missing {' '.join(missing)}" if missing else ""))
    report(not extra, f"{what}: page options in --help" +
           (f"; not in --help: {' '.join(extra)}" if extra else ""))


def check_topotune(helps, page, version):
    top = read(os.path.join(helps, "top"))
    names = commands(top)
    report(bool(names), "topotune --help lists commands")
    top_opts = options(top)
    secs = sections(page)
    help_of = {n: read(os.path.join(helps, "cmd." + n)) for n in names}
    opts_of = {n: options(h) for n, h in help_of.items()}
    th = re.search(r'^\.TH\s+\S+\s+1\s+\S+\s+"([^"]*)"', read(page), re.M)
    report(th is not None and th.group(1) == version,
           f"topotune.1 .TH names '{version}' (it names '{th.group(1) if th else '?'}')")
    # commands: one subsection each, options both ways
    subs = {}
    for sh, ss, _ in secs:
        if sh == "COMMANDS" and ss:
            words = ss.split()
            subs[words[-1]] = ss
    for n in names:
        if n not in subs:
            report(False, f"topotune.1 has a subsection for '{n}'")
            continue
        report(True, f"topotune.1 has a subsection for '{n}'")
        text = section_text(secs, "COMMANDS", subs[n])
        # a command whose --help is topotune's own usage has no options of its own
        own = help_of[n].strip() != top.strip()
        compare(f"topotune {n}", opts_of[n], options(text) - GLOBAL, forward=own)
    for s in sorted(set(subs) - set(names)):
        report(False, f"topotune.1 subsection '{subs[s]}' is a command of topotune --help")
    # topotune's own options
    compare("topotune (OPTIONS)", top_opts, options(section_text(secs, "OPTIONS")))
    compare("topotune (SYNOPSIS)", top_opts, options(section_text(secs, "SYNOPSIS")),
            forward=False)
    # examples: each option after 'topotune CMD' is CMD's (or -q/-v)
    bad = []
    n_lines = 0
    for words in command_lines(section_text(secs, "EXAMPLES", whole=True), "topotune"):
        words = [w for w in words if w not in GLOBAL]
        if not words or words[0] not in opts_of:
            bad.append(f"'topotune {' '.join(words[:1])}' is no command")
            continue
        n_lines += 1
        for o in options(" ".join(words[1:])) - opts_of[words[0]]:
            bad.append(f"topotune {words[0]} {o}")
    report(n_lines > 0 and not bad, f"topotune.1 examples ({n_lines}) use options of their command"
           + (f"; not in --help: {', '.join(bad)}" if bad else ""))
    # any other option named on the page belongs to some command
    every = set().union(top_opts, *opts_of.values())
    rest = set()
    for sh, ss, lines in secs:
        if sh not in ("COMMANDS", "OPTIONS", "SYNOPSIS", "EXAMPLES"):
            rest |= options("\n".join(lines))
    compare("topotune.1 (other sections)", every, rest, forward=False)


def check_bench(helps, page, version):
    bench_opts = options(read(os.path.join(helps, "topotune-bench")))
    report(len(bench_opts) > 10, f"topotune-bench --help lists options ({len(bench_opts)})")
    secs = sections(page)
    th = re.search(r'^\.TH\s+\S+\s+1\s+\S+\s+"([^"]*)"', read(page), re.M)
    report(th is not None and th.group(1) == version, f"topotune-bench.1 .TH names '{version}'")
    compare("topotune-bench (OPTIONS)", bench_opts, options(section_text(secs, "OPTIONS")))
    rest = set()
    for sh, ss, lines in secs:
        if sh not in ("OPTIONS", "EXAMPLES", "SYNOPSIS"):
            rest |= options("\n".join(lines))
    compare("topotune-bench.1 (other sections)", bench_opts, rest, forward=False)
    # the synopsis and the examples: options after the program name (not mpirun's)
    used, n_lines = set(), 0
    for sh in ("SYNOPSIS", "EXAMPLES"):
        for words in command_lines(section_text(secs, sh, whole=True), "topotune-bench"):
            n_lines += 1
            used |= options(" ".join(words))
    report(n_lines > 1, f"topotune-bench.1 shows command lines ({n_lines})")
    compare("topotune-bench.1 (synopsis, examples)", bench_opts, used, forward=False)


def check_environment(pages, src):
    """TOPOTUNE_* names the sources read (as string literals) against the ENVIRONMENT sections."""
    read_names, all_text = set(), []
    for root, dirs, files in os.walk(src):
        dirs[:] = [d for d in dirs
                   if not d.startswith((".", "build")) and d not in ("tests", "docs")]
        for f in files:
            if f.endswith((".c", ".h")):
                text = read(os.path.join(root, f))
                all_text.append(text)
                read_names |= set(re.findall(r'"(TOPOTUNE_[A-Z0-9_]+)"', text))
    report(bool(read_names), f"the sources name TOPOTUNE_* variables ({len(read_names)})")
    documented = set()
    for page in pages:
        documented |= set(re.findall(r"\bTOPOTUNE_[A-Z0-9_]+",
                                     section_text(sections(page), "ENVIRONMENT")))
    missing = sorted(read_names - documented)
    report(not missing, "every TOPOTUNE_* variable read is under ENVIRONMENT" +
           (f"; missing {' '.join(missing)}" if missing else ""))
    code = "\n".join(all_text)
    gone = sorted(n for n in documented if not re.search(r"\b" + n + r"\b", code))
    report(not gone, "every TOPOTUNE_* variable under ENVIRONMENT is in the sources" +
           (f"; not found: {' '.join(gone)}" if gone else ""))


def listed(path, heading, pattern):
    """The names matched by PATTERN at the start of lines of the '## HEADING' section of PATH."""
    names, inside = [], False
    for line in read(path).splitlines():
        if line.startswith("## "):
            inside = line[3:].strip() == heading
        elif inside:
            m = re.match(pattern, line)
            if m:
                names.append(m.group(1))
    return names


def check_lists(helps, design, readme):
    """Each document's command list against the commands of topotune --help, both ways."""
    names = commands(read(os.path.join(helps, "top")))
    for path, heading, pattern in (
            (design, "Programs", r"\s+- `([a-z][a-z0-9-]*)`:"),  # nested under `topotune`
            (readme, "Commands", r"- `topotune ([a-z][a-z0-9-]*)`")):
        got = listed(path, heading, pattern)
        missing = [n for n in names if n not in got]
        extra = sorted(set(got) - set(names))
        report(names and not missing and not extra,
               f"{os.path.basename(path)} ({heading}) names the commands of topotune --help" +
               (f"; missing {' '.join(missing)}" if missing else "") +
               (f"; not in --help: {' '.join(extra)}" if extra else ""))


mode = sys.argv[1]
if mode == "commands":
    print("\n".join(commands(read(sys.argv[2]))))
elif mode == "topotune":
    check_topotune(sys.argv[2], sys.argv[3], sys.argv[4])
elif mode == "bench":
    check_bench(sys.argv[2], sys.argv[3], sys.argv[4])
elif mode == "environment":
    check_environment(sys.argv[3:], sys.argv[2])
elif mode == "lists":
    check_lists(sys.argv[2], sys.argv[3], sys.argv[4])
PY

# run_checker WHAT ARGS...: the checker's lines as checks; a checker that breaks fails.
run_checker() {
    local what=$1 line
    shift
    if ! python3 "$TEST_TMP/man.py" "$@" >"$TEST_TMP/checked" 2>"$TEST_TMP/checker.err"; then
        fail "$what: the checker failed: $(tail -3 "$TEST_TMP/checker.err")"
        return
    fi
    while IFS= read -r line; do
        case $line in
        ok:*) pass ;;
        FAIL:*) fail "$what: ${line#FAIL: }" ;;
        esac
    done <"$TEST_TMP/checked"
}

# 1. The pages exist and render: groff with every warning on, man -l, the NAME line for whatis.
for page in "$man1" "$man_bench"; do
    name=$(basename "$page")
    check "$name exists" test -s "$page"
    if command -v groff >/dev/null; then
        groff -man -Tutf8 -ww -z "$page" 2>"$TEST_TMP/groff.err"
        check "$name renders without groff warnings: $(head -3 "$TEST_TMP/groff.err")" \
            test ! -s "$TEST_TMP/groff.err"
    else
        fail "groff not found: install groff-base (apt-get install -y groff-base)"
    fi
    if command -v man >/dev/null; then
        MANWIDTH=80 man -P cat -l "$page" >"$TEST_TMP/man.txt" 2>"$TEST_TMP/man.err"
        check "man -l $name: $(head -3 "$TEST_TMP/man.err")" grep -q '^NAME' "$TEST_TMP/man.txt"
    fi
    if command -v lexgrog >/dev/null; then
        check "whatis reads the NAME of $name" lexgrog "$page" >/dev/null
    fi
done

# 2. What --help says: topotune's usage, each command's help, topotune-bench's help.
expect_exit 0 "topotune --help" -- "$TOPOTUNE" --help
cp "$TEST_TMP/out" "$helps/top"
expect_exit 0 "topotune --version" -- "$TOPOTUNE" --version
version=$(cat "$TEST_TMP/out")
mapfile -t commands < <(python3 "$TEST_TMP/man.py" commands "$helps/top")
check "topotune --help lists the commands" test "${#commands[@]}" -gt 5
for cmd in "${commands[@]}"; do
    expect_exit 0 "topotune $cmd --help" -- "$TOPOTUNE" "$cmd" --help
    cp "$TEST_TMP/out" "$helps/cmd.$cmd"
done
expect_exit 0 "topotune-bench --help" -- "$TOPOTUNE_BENCH" --help
cp "$TEST_TMP/out" "$helps/topotune-bench"
# a usage's options run on a line of their own: a lost line break left "FILE]       [-b MIN]"
check "no usage line with a lost line break" sh -c "! grep -n '[^ ]       \[' '$helps'/*"

# 3. The pages against it, and ENVIRONMENT against the sources.
run_checker topotune.1 topotune "$helps" "$man1" "$version"
run_checker topotune-bench.1 bench "$helps" "$man_bench" "$version"
run_checker ENVIRONMENT environment "$TOPOTUNE_SRC" "$man1" "$man_bench"
design=$TOPOTUNE_SRC/docs/design.md
readme=$TOPOTUNE_SRC/README.md
run_checker "command lists" lists "$helps" "$design" "$readme"

# 4. The checker catches drift: an option the page documents that --help lacks (a removed one),
# and an option --help prints that the page lacks (a new one), each in one command only. Only the
# FAIL lines these changes add count (new_failures), whatever the real pages say.
new_failures() { # BASELINE CHANGED: the FAIL lines of CHANGED that BASELINE lacks
    grep '^FAIL' "$2" | grep -vxF -f <(grep '^FAIL' "$1" || echo '-') || true
}
checker() { python3 "$TEST_TMP/man.py" "$@"; }
checker topotune "$helps" "$man1" "$version" >"$TEST_TMP/base1.out"
checker bench "$helps" "$man_bench" "$version" >"$TEST_TMP/base2.out"
sed 's/^\.SS "topotune topo"$/&\n.TP\n.B \\-\\-removed\\-flag\nGone./' "$man1" >"$TEST_TMP/stale.1"
checker topotune "$helps" "$TEST_TMP/stale.1" "$version" >"$TEST_TMP/stale.out"
check "a documented option --help lacks is caught, and only that" test \
    "$(new_failures "$TEST_TMP/base1.out" "$TEST_TMP/stale.out")" = \
    "FAIL: topotune topo: page options in --help; not in --help: --removed-flag"
cp -r "$helps" "$TEST_TMP/help-new"
printf '      --new-flag N             a new option\n' >>"$TEST_TMP/help-new/cmd.doctor"
printf '  -Z, --zeta N                 a new option\n' >>"$TEST_TMP/help-new/topotune-bench"
checker topotune "$TEST_TMP/help-new" "$man1" "$version" >"$TEST_TMP/new1.out"
check "an option --help prints that the page lacks is caught, and only that" test \
    "$(new_failures "$TEST_TMP/base1.out" "$TEST_TMP/new1.out")" = \
    "FAIL: topotune doctor: --help options on the page; missing --new-flag"
checker bench "$TEST_TMP/help-new" "$man_bench" "$version" >"$TEST_TMP/new2.out"
check "... for topotune-bench too, long and short" test \
    "$(new_failures "$TEST_TMP/base2.out" "$TEST_TMP/new2.out")" = \
    "FAIL: topotune-bench (OPTIONS): --help options on the page; missing --zeta -Z"

# ... and the command lists: one dropped from design.md, one README names that --help lacks, one
# --help gains that neither document has.
checker lists "$helps" "$design" "$readme" >"$TEST_TMP/base3.out"
# shellcheck disable=SC2016 # Markdown's backquotes, not the shell's
grep -v '^ *- `verify`:' "$design" >"$TEST_TMP/design.md"
checker lists "$helps" "$TEST_TMP/design.md" "$readme" >"$TEST_TMP/lists1.out"
check "a command design.md no longer lists is caught, and only that" test \
    "$(new_failures "$TEST_TMP/base3.out" "$TEST_TMP/lists1.out")" = \
    "FAIL: design.md (Programs) names the commands of topotune --help; missing verify"
# shellcheck disable=SC2016 # the same
sed 's/^- `topotune help`.*$/&\n- `topotune frobnicate`: no such command/' "$readme" >"$TEST_TMP/README.md"
checker lists "$helps" "$design" "$TEST_TMP/README.md" >"$TEST_TMP/lists2.out"
check "a command the README lists that --help lacks is caught, and only that" test \
    "$(new_failures "$TEST_TMP/base3.out" "$TEST_TMP/lists2.out")" = \
    "FAIL: README.md (Commands) names the commands of topotune --help; not in --help: frobnicate"
sed 's/^  help .*$/&\n  frobnicate  a new command/' "$helps/top" >"$TEST_TMP/help-new/top"
checker lists "$TEST_TMP/help-new" "$design" "$readme" >"$TEST_TMP/lists3.out"
check "a new command of --help that neither list names is caught in both" test \
    "$(new_failures "$TEST_TMP/base3.out" "$TEST_TMP/lists3.out")" = \
    "FAIL: design.md (Programs) names the commands of topotune --help; missing frobnicate
FAIL: README.md (Commands) names the commands of topotune --help; missing frobnicate"
finish
