#!/usr/bin/env python3
"""Every shipped search space reads the same in yaml-cpp (tiletune's parser) and in PyYAML.

Usage: yaml_interop.py YAML_DUMP FILE.yaml...   (YAML_DUMP prints yaml-cpp's reading as JSON)

PyYAML's BaseLoader keeps every scalar as text, as yaml-cpp does, so the two readings must be
equal item for item: same keys, same list lengths (an expression split at a comma would make
two items in one reader and not the other), same scalar texts. Exits 77 (ctest: skipped) when
PyYAML is missing, 1 on the first difference.
"""
import json
import subprocess
import sys

try:
    import yaml
except ImportError:
    print("PyYAML is not installed (Debian: python3-yaml): skipped")
    sys.exit(77)


def canonical(node):
    if isinstance(node, dict):
        return {"map": [[canonical(k), canonical(v)] for k, v in node.items()]}
    if isinstance(node, list):
        return [canonical(x) for x in node]
    if node is None or node == "":
        return None
    return str(node)


def main():
    dump, files = sys.argv[1], sys.argv[2:]
    if not files:
        print("no files given")
        return 1
    for path in files:
        ours = json.loads(subprocess.run([dump, path], check=True, capture_output=True, text=True).stdout)
        with open(path, encoding="utf-8-sig") as f:
            theirs = canonical(yaml.load(f, Loader=yaml.BaseLoader))
        if canonical_null(ours) != theirs:
            print(f"{path}: yaml-cpp and PyYAML read it differently:\n  yaml-cpp: {json.dumps(ours)}\n  PyYAML:   {json.dumps(theirs)}")
            return 1
        print(f"{path}: same in yaml-cpp and PyYAML")
    return 0


def canonical_null(node):
    # yaml-cpp gives an empty scalar for `key:` where PyYAML's BaseLoader gives "": both are null here.
    if isinstance(node, dict):
        return {"map": [[canonical_null(k), canonical_null(v)] for k, v in node["map"]]}
    if isinstance(node, list):
        return [canonical_null(x) for x in node]
    return None if node == "" else node


if __name__ == "__main__":
    sys.exit(main())
