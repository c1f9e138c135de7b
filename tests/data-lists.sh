#!/bin/sh
# tests/data-lists.sh - every preset and GPU profile in the source tree is
# installed and distributed: Makefile.am lists them one by one (automake has
# no wildcards), and a file left off the list is missing from `make install`
# and the tarball while every test in the tree still finds it.
top_srcdir=${top_srcdir:-$(dirname "$0")/..}
n=0 failed=0
for f in "$top_srcdir"/presets/*.ini "$top_srcdir"/profiles/*.ini; do
    rel=${f#"$top_srcdir"/}
    n=$((n + 1))
    if grep -q "^[[:space:]]*$rel\( \\\\\)\{0,1\}$" "$top_srcdir/Makefile.am"; then
        echo "ok $n - $rel is in Makefile.am's data lists"
    else
        echo "not ok $n - $rel is in Makefile.am's data lists (dist_presets_DATA or dist_profiles_DATA)"
        failed=1
    fi
done
echo "1..$n"
exit $failed
