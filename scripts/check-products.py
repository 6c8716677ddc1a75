#!/usr/bin/env python3
"""check-products.py: reads `swift package dump-package` on stdin and fails (exit 1) when a target that a library
product contains, directly or through the package's own target dependencies, has `unsafeFlags` in its settings: SwiftPM
refuses such a product to every package that requires this one by version. scripts/consumer-test.sh runs it for the
products its consumer package does not build (it builds two of them for real)."""
import json
import sys


def has_unsafe_flags(value):
    if isinstance(value, dict):
        return "unsafeFlags" in value or any(has_unsafe_flags(item) for item in value.values())
    if isinstance(value, list):
        return any(has_unsafe_flags(item) for item in value)
    return False


def own_dependencies(target, names):
    for dependency in target.get("dependencies", []):
        for kind in ("byName", "target"):
            if kind in dependency and dependency[kind][0] in names:
                yield dependency[kind][0]


def main():
    package = json.load(sys.stdin)
    targets = {target["name"]: target for target in package["targets"]}
    problems = []
    libraries = [product for product in package["products"] if "library" in product["type"]]
    for product in libraries:
        seen, stack = set(), list(product["targets"])
        while stack:
            name = stack.pop()
            if name in seen:
                continue
            seen.add(name)
            if has_unsafe_flags(targets[name].get("settings", [])):
                problems.append(f"library product {product['name']}: target {name} has unsafeFlags")
            stack.extend(own_dependencies(targets[name], targets))
    for problem in problems:
        print(f"check-products: {problem}")
    if problems:
        return 1
    print(f"check-products: no unsafeFlags in the {len(libraries)} library products' targets")
    return 0


if __name__ == "__main__":
    sys.exit(main())
