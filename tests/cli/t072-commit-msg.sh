#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tools/hooks/commit-msg, the commit-message contract of CONTRIBUTING.md: run on message files as
# git runs it, then by git itself in a scratch repository with core.hooksPath set. A summary of
# at most 72 characters, a blank line and a body pass; a long summary, a missing body, a missing
# blank line, an empty message and a summary ending in a period are refused with the reason.
# Comment lines and what follows git's scissors line do not count; fixup! and Merge pass.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
: "${TOPOTUNE_SRC:?set by ctest: the source tree}"
hook=$TOPOTUNE_SRC/tools/hooks/commit-msg
cd "$TEST_TMP" || exit 1
msg() { printf '%s\n' "$@" >m; }

msg "survey: a suspect alone is judged on a longer repeat" "" "Why: one preemption made it slow."
expect_exit 0 "a summary, a blank line, a body" -- "$hook" m
summary72=$(printf 'gen: %067d' 0)
msg "$summary72" "" "Why."
expect_exit 0 "a summary of exactly 72 characters" -- "$hook" m
msg "${summary72}x" "" "Why."
expect_exit 1 "a summary of 73 characters refused" -- "$hook" m
expect_stderr_has "the summary has 73 characters; at most 72" "the length said"
msg "gen: one line only"
expect_exit 1 "no body refused" -- "$hook" m
expect_stderr_has "no body" "the missing body said"
msg "gen: a summary" "a body glued to it" "more"
expect_exit 1 "no blank line refused" -- "$hook" m
expect_stderr_has "second line must be blank" "the missing blank line said"
msg "gen: a summary." "" "Why."
expect_exit 1 "a final period refused" -- "$hook" m
msg "# only a comment" ""
expect_exit 1 "an empty message refused" -- "$hook" m
expect_stderr_has "the message is empty" "the empty message said"
msg "gen: a summary" "# a comment in between" "" "Why." "# Please enter the commit message"
expect_exit 0 "comment lines do not count" -- "$hook" m
msg "gen: a summary" "# ------------------------ >8 ------------------------" "diff --git a/x b/x"
expect_exit 1 "the diff after the scissors is no body" -- "$hook" m
msg "fixup! gen: a summary"
expect_exit 0 "fixup! passes (git squashes it away)" -- "$hook" m
msg "Merge branch 'x'"
expect_exit 0 "a merge passes" -- "$hook" m

# The same hook as git runs it.
if command -v git >/dev/null; then
    git init -q repo && cd repo || exit 1
    git config user.name test && git config user.email test@example.invalid
    git config core.hooksPath "$TOPOTUNE_SRC/tools/hooks"
    echo a >a && git add a
    expect_exit 1 "git commit with a one-line message refused" -- git commit -q -m "gen: no body"
    expect_exit 0 "git commit with a body taken" -- git commit -q -m "gen: a summary" -m "Why."
    check "the commit made" test "$(git rev-list --count HEAD)" = 1
fi
finish
