#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Validates a JSON file, or each line of a JSON Lines file, against a topotune schema.

usage: validate-schema.py SCHEMA FILE [--lines]

Every *.schema.json next to SCHEMA is loaded too, so that references between the
schemas (sweep.json embeds a topology and a space) resolve offline. The file is read
as topotune's own reader (Jansson) reads it: UTF-8, duplicate keys and NaN/Infinity
refused, and an integer is a number written without a fraction or exponent (2.0 is
not an integer). With --lines, every line must be one JSON document ending in a
newline, as results.jsonl and topotune-bench --json write them; an empty file passes.

Prints one line per failure, "FILE[:LINE]: $.json.path: message", and exits 1 on any
failure, 2 on a usage error.
"""
import json
import os
import sys

import jsonschema

MAX_ERRORS = 20  # per document: enough to see what is wrong, not a wall of text


def fail_usage(msg):
    print(f"validate-schema.py: {msg}", file=sys.stderr)
    print("usage: validate-schema.py SCHEMA FILE [--lines]", file=sys.stderr)
    sys.exit(2)


def no_duplicates(pairs):
    seen = {}
    for key, value in pairs:
        if key in seen:
            raise ValueError(f"duplicate key {key!r}")
        seen[key] = value
    return seen


def no_constant(name):
    raise ValueError(f"{name} is not JSON")


def parse(text):
    return json.loads(text, object_pairs_hook=no_duplicates, parse_constant=no_constant)


def json_path(path):
    out = "$"
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def short(text, limit=300):
    return text if len(text) <= limit else text[:limit] + "..."


def strict_integer(checker, instance):
    return isinstance(instance, int) and not isinstance(instance, bool)


def make_validator(schema_path):
    schema_dir = os.path.dirname(os.path.abspath(schema_path))
    schemas = {}
    for name in sorted(os.listdir(schema_dir)):
        if name.endswith(".schema.json"):
            with open(os.path.join(schema_dir, name), encoding="utf-8") as f:
                schemas[os.path.join(schema_dir, name)] = parse(f.read())
    schema = schemas.get(os.path.abspath(schema_path))
    if schema is None:
        with open(schema_path, encoding="utf-8") as f:
            schema = parse(f.read())
    base = jsonschema.validators.validator_for(schema)
    base.check_schema(schema)
    cls = jsonschema.validators.extend(
        base, type_checker=base.TYPE_CHECKER.redefine("integer", strict_integer))
    try:
        from referencing import Registry, Resource
        registry = Registry().with_resources(
            (s["$id"], Resource.from_contents(s)) for s in schemas.values() if "$id" in s)
        return cls(schema, registry=registry)
    except ImportError:  # jsonschema before 4.18
        store = {s["$id"]: s for s in schemas.values() if "$id" in s}
        resolver = jsonschema.RefResolver.from_schema(schema, store=store)
        return cls(schema, resolver=resolver)


def check(validator, doc, where):
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))
    for e in errors[:MAX_ERRORS]:
        print(f"{where}: {json_path(e.absolute_path)}: {short(e.message)}")
    if len(errors) > MAX_ERRORS:
        print(f"{where}: ... and {len(errors) - MAX_ERRORS} more")
    return len(errors)


def main(argv):
    args = [a for a in argv if a != "--lines"]
    lines = len(args) != len(argv)
    if len(args) != 2:
        fail_usage("expected SCHEMA and FILE")
    schema_path, path = args
    try:
        validator = make_validator(schema_path)
    except (OSError, ValueError, jsonschema.SchemaError) as e:
        print(f"{schema_path}: not a usable schema: {short(str(e))}")
        return 1
    try:
        with open(path, "rb") as f:
            text = f.read().decode("utf-8")
    except (OSError, UnicodeDecodeError) as e:
        print(f"{path}: cannot read: {e}")
        return 1
    failures = 0
    if not lines:
        try:
            doc = parse(text)
        except ValueError as e:
            print(f"{path}: not JSON: {e}")
            return 1
        failures = check(validator, doc, path)
    else:
        parts = text.split("\n")
        if parts[-1] != "":
            print(f"{path}:{len(parts)}: the last line has no newline (a torn write?)")
            failures += 1
        for number, line in enumerate(parts[:-1], 1):
            try:
                doc = parse(line)
            except ValueError as e:
                print(f"{path}:{number}: not JSON: {e}")
                failures += 1
                continue
            failures += check(validator, doc, f"{path}:{number}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
