#!/usr/bin/env bash
# The consumer-package test (`make consumer-test`, the last step of `make test`): this repository used as any other
# package uses it, by version, and docs/SWIFT.md's code compiled and run.
#
#   scripts/consumer-test.sh [BIN_DIR]    BIN_DIR holds the subd to run (default: `swift build --show-bin-path`)
#
# 1. Clones the repository's committed HEAD (bare, no tags) into a temporary directory and tags it with the version
#    that docs/SWIFT.md's manifest asks for (`from: "0.1.0"`): SwiftPM then takes it as a versioned dependency, which
#    it refuses when a target has `unsafeFlags`.
# 2. Makes the consumer package from docs/SWIFT.md: its ```swift package block is the Package.swift (the URL
#    placeholder replaced by the clone's file:// URL); every other ```swift block becomes a function of its own file
#    (imports moved to the top of the file, `#sourceLocation` pointing at docs/SWIFT.md, so compiler errors name the
#    docs' lines); Tests/Consumer/*.swift is the program that runs them and checks both libraries.
#    Every library product, also those the consumer does not use, is checked for `unsafeFlags` in its targets
#    (scripts/check-products.py on `swift package dump-package`).
# 3. Builds it in a scratch directory (the dependencies come from SwiftPM's shared cache), starts BIN_DIR/subd on
#    127.0.0.1 port 0, and runs `check` (NotificationHub in process, SubscriptionClient against subd), then each
#    ```swift block (not those marked ```swift no-run), each in its own process; a ```text block that comes right
#    after a block (the next fenced block) is what it must print, byte for byte.
# Any failure (clone, build, check, a block's output) exits non-zero. The temporary directory is removed at the end,
# unless CONSUMER_TEST_KEEP=1 (it then says where it is, to look at the package it made).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
swift=${SWIFT:-swift}
docs="$root/docs/SWIFT.md"
placeholder="https://github.com/OWNER/subd.git"
started=$SECONDS

fail() {
    echo "consumer-test: $*" >&2
    exit 1
}

bin_dir=${1:-$("$swift" build --package-path "$root" --show-bin-path)}
[ -x "$bin_dir/subd" ] || fail "no executable $bin_dir/subd: run \`swift build --product subd\` first"
[ -f "$docs" ] || fail "no $docs"
commit=$(git -C "$root" rev-parse --verify HEAD) || fail "$root is not a git checkout with a commit"
if [ -n "$(git -C "$root" status --porcelain --untracked-files=no -- Sources Package.swift)" ]; then
    echo "consumer-test: note: the dependency is the commit $commit; uncommitted changes under Sources/ and to" \
        "Package.swift are not in it (docs/SWIFT.md and Tests/Consumer are taken from the working tree)" >&2
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/subd-consumer.XXXXXX")
subd_pid=
cleanup() {
    if [ -n "$subd_pid" ]; then
        kill "$subd_pid" 2>/dev/null || true
        wait "$subd_pid" 2>/dev/null || true
    fi
    if [ "${CONSUMER_TEST_KEEP:-}" = 1 ]; then
        echo "consumer-test: kept $work" >&2
    else
        rm -rf "$work"
    fi
    # SwiftPM's lock files for the scratch path, left in the temporary directory beside it (the path, / as _).
    local locks
    locks=$(printf '%s' "$work/build" | tr / _)
    rm -f "${TMPDIR:-/tmp}/$locks".lock "${TMPDIR:-/tmp}/$locks"_*.lock
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The consumer package, from docs/SWIFT.md.
package="$work/consumer"
mkdir -p "$package/blocks"
awk -v out="$package/blocks" -v docs="$docs" '
    function finish(   i, n) {
        if (info == "swift package") {
            if (manifest) { print "a second ```swift package block at line " start > "/dev/stderr"; exit 1 }
            manifest = 1
            for (i = 1; i <= count; i++) print lines[i] > (out "/Package.swift")
            last = ""
            return
        }
        if (info == "swift" || info == "swift no-run") {
            n = ++blocks
            file = out "/DocBlock" n ".swift"
            for (i = 1; i <= count; i++) if (lines[i] ~ /^import /) print lines[i] > file
            print "" > file
            print "/// docs/SWIFT.md, the ```swift block at line " start "." > file
            print "func docBlock" n "() async throws {" > file
            print "#sourceLocation(file: \"" docs "\", line: " start + 1 ")" > file
            for (i = 1; i <= count; i++) {
                line = lines[i]
                if (line ~ /^import /) line = ""
                gsub(/"127\.0\.0\.1:7827"/, "docServer", line)
                print line > file
            }
            print "#sourceLocation()" > file
            print "}" > file
            close(file)
            print n, start, (info == "swift" ? "run" : "no-run") > (out "/blocks.txt")
            last = (info == "swift" ? n : "")
            return
        }
        if (info == "text" && last != "") {
            for (i = 1; i <= count; i++) print lines[i] > (out "/expected" last ".txt")
        }
        last = ""
    }
    !inside && /^```[^`]*$/ { inside = 1; info = substr($0, 4); sub(/[ \t]+$/, "", info); start = NR; count = 0; next }
    inside && /^```[ \t]*$/ { inside = 0; finish(); next }
    inside { lines[++count] = $0 }
    END {
        if (inside) { print "docs/SWIFT.md: the block at line " start " is not closed" > "/dev/stderr"; exit 1 }
        if (!manifest) { print "docs/SWIFT.md has no ```swift package block" > "/dev/stderr"; exit 1 }
    }
' "$docs" || fail "cannot read the code blocks of docs/SWIFT.md"
[ -f "$package/blocks/blocks.txt" ] || fail "docs/SWIFT.md has no \`\`\`swift blocks"

grep -qF "$placeholder" "$package/blocks/Package.swift" \
    || fail "docs/SWIFT.md's manifest does not name the placeholder $placeholder"
version=$(sed -n 's/.*from: "\([0-9][0-9.]*\)".*/\1/p' "$package/blocks/Package.swift" | head -n 1)
[ -n "$version" ] || fail "docs/SWIFT.md's manifest has no from: \"VERSION\""
target=$(tr '\n' ' ' < "$package/blocks/Package.swift" \
    | sed -n 's/.*\.executableTarget( *name: *"\([^"]*\)".*/\1/p')
[ -n "$target" ] || fail "docs/SWIFT.md's manifest has no .executableTarget(name: ...)"

# The dependency: HEAD, cloned and tagged. No tags of the repository come along, so the version asked for is HEAD.
clone="$work/subd.git"
git clone --quiet --bare --no-tags "$root" "$clone" || fail "cannot clone $root"
git -C "$clone" tag "$version" "$commit"

sed "s|$placeholder|file://$clone|" "$package/blocks/Package.swift" > "$package/Package.swift"
mkdir -p "$package/Sources/$target"
mv "$package"/blocks/DocBlock*.swift "$package/Sources/$target/"
cp "$root"/Tests/Consumer/*.swift "$package/Sources/$target/"
{
    echo "/// docs/SWIFT.md's \`\`\`swift blocks in order (written by scripts/consumer-test.sh)."
    echo "let docBlocks: [@Sendable () async throws -> Void] = ["
    while read -r n _ _; do echo "    docBlock$n,"; done < "$package/blocks/blocks.txt"
    echo "]"
} > "$package/Sources/$target/DocBlocks.swift"

# The consumer builds two of the library products for real; every library product, the others too, must be free of
# unsafeFlags for SwiftPM to take it by version.
"$swift" package dump-package --package-path "$root" | python3 "$root/scripts/check-products.py" \
    || fail "a library product cannot be used by version (see above)"

echo "consumer-test: building a package that depends on subd $version (a clone of ${commit:0:12}) and" \
    "$(wc -l < "$package/blocks/blocks.txt") blocks of docs/SWIFT.md"
build_started=$SECONDS
"$swift" build --quiet --package-path "$package" --scratch-path "$work/build" \
    || fail "the consumer package did not build (see above; errors in docs/SWIFT.md's blocks name its lines)"
program="$("$swift" build --package-path "$package" --scratch-path "$work/build" --show-bin-path)/$target"
build_seconds=$((SECONDS - build_started))

# A subd of its own, on a free port.
printf 'log_level: info\nstate_dir: ""\n' > "$work/subd.yaml"
"$bin_dir/subd" --config "$work/subd.yaml" --listen 127.0.0.1:0 2> "$work/subd.log" &
subd_pid=$!
port=
for _ in $(seq 100); do
    port=$(sed -n 's/.*listening on tcp 127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' "$work/subd.log" | head -n 1)
    [ -n "$port" ] && break
    kill -0 "$subd_pid" 2>/dev/null || break
    sleep 0.1
done
[ -n "$port" ] || fail "$bin_dir/subd did not start: $(cat "$work/subd.log")"
server="127.0.0.1:$port"

timeout 60 "$program" check "$server" || fail "the consumer's check failed (subd at $server)"

while read -r n line mode; do
    [ "$mode" = run ] || continue
    timeout 60 "$program" block "$n" "$server" > "$work/printed.txt" \
        || fail "docs/SWIFT.md:$line: the block failed when run"
    expected="$package/blocks/expected$n.txt"
    if [ -f "$expected" ] && ! diff -u --label "docs/SWIFT.md:$line (the text block after it)" \
        --label "what it printed" "$expected" "$work/printed.txt" >&2; then
        fail "docs/SWIFT.md:$line: the block did not print what the docs say"
    fi
done < "$package/blocks/blocks.txt"

kill "$subd_pid"
wait "$subd_pid" 2>/dev/null || true
subd_pid=
echo "consumer-test: passed in $((SECONDS - started)) s (the consumer's build ${build_seconds} s)"
