#!/usr/bin/env python3
"""check-line-length.py LIMIT PATH...: print every line of a .swift file under PATH longer than LIMIT bytes of UTF-8
(as FILE:LINE: N bytes) and exit 1 if there is one. Bytes, not characters: a line of ASCII is as wide as it is long,
and one with `é` or a box-drawing character is never let through on a count that another tool would refuse.
`make lint` runs it: swift-format wraps code at the same limit but leaves comments and string literals alone."""
import os
import sys


def swift_files(paths):
    for path in paths:
        if os.path.isfile(path):
            yield path
            continue
        for folder, _, names in os.walk(path):
            for name in sorted(names):
                if name.endswith(".swift"):
                    yield os.path.join(folder, name)


def main():
    limit = int(sys.argv[1])
    long_lines = 0
    for path in swift_files(sys.argv[2:]):
        with open(path, encoding="utf-8") as file:
            for number, line in enumerate(file, 1):
                width = len(line.rstrip("\n").encode("utf-8"))
                if width > limit:
                    print(f"{path}:{number}: {width} bytes (at most {limit})")
                    long_lines += 1
    if long_lines:
        print(f"{long_lines} lines over {limit} bytes; wrap them")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
