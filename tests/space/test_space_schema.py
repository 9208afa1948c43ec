#!/usr/bin/env python3
"""docs/space.schema.json, the JSON Schema editors use for search spaces, says what the loader says.

Usage: test_space_schema.py SOURCE_DIR

Checks, each of which fails the test:
- the schema is a valid draft-07 schema, every property in it has a description, and every map
  of fixed keys refuses unknown ones (additionalProperties: false), as the loader does;
- every shipped space (configs/**/*.yaml, examples/**/*.yaml) and every good test space (every *.yaml under tests/
  outside tests/spaces/bad/) is valid against it;
- a space's `# yaml-language-server: $schema=...` modeline, where it has one, names the schema
  file from the space's own folder, before any YAML content (the shipped spaces carry none yet:
  test_space checks line numbers of configs/transpose.yaml, which a first line would shift),
  and so does the example of docs/reference/editor.md, from configs/;
- bad spaces whose mistake is structural (an unknown key, a wrong type, a missing required key,
  a word outside its enum: listed in STRUCTURAL with the rule that rejects them) are invalid,
  and every error the schema reports lies over the line the loader names in `# expect:`;
  a bad space whose expected error reads as structural must be listed in STRUCTURAL or in
  NOT_STRUCTURAL, so that a new one is not silently left out;
- mistakes written here (MISTAKES, each made on configs/transpose.yaml) are invalid;
- the key lists and words of the loader (kTopKeys, kBufferKeys, kCompares, the element types,
  ... in tuner/src/space/) are the schema's, so a key added to the loader fails here until the
  schema has it.

YAML is read as the YAML language server (VS Code's Red Hat YAML extension) reads it: YAML 1.2's
core schema, in which `yes` is a word and `1e-5` a number (PyYAML alone reads YAML 1.1). Exits 77
(ctest: skipped) when PyYAML or jsonschema is missing.
"""
import copy
import json
import re
import sys
from pathlib import Path

try:
    import jsonschema
    import yaml
except ImportError as e:
    print(f"{e.name} is not installed (Debian: python3-yaml, python3-jsonschema): skipped")
    sys.exit(77)

SCHEMA_PATH = Path("docs/space.schema.json")
MODELINE = re.compile(r"^#\s*yaml-language-server:\s*\$schema=(\S+)\s*$")


class CoreLoader(yaml.SafeLoader):
    """PyYAML's safe loader with YAML 1.2's core schema resolvers instead of YAML 1.1's."""


CoreLoader.yaml_implicit_resolvers = {}
CoreLoader.add_implicit_resolver("tag:yaml.org,2002:null", re.compile(r"^(?:~|null|Null|NULL|)$"), list("~nN") + [""])
CoreLoader.add_implicit_resolver("tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
                                 list("tTfF"))
CoreLoader.add_implicit_resolver("tag:yaml.org,2002:int", re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$"),
                                 list("-+0123456789"))
CoreLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"),
    list("-+0123456789."))


def construct_core_int(loader, node):
    # YAML 1.1's constructor reads 017 as octal and 1_000 as 1000; YAML 1.2's core schema does not.
    text = loader.construct_scalar(node)
    if text.startswith("0x"):
        return int(text[2:], 16)
    if text.startswith("0o"):
        return int(text[2:], 8)
    return int(text, 10)


CoreLoader.add_constructor("tag:yaml.org,2002:int", construct_core_int)


def read_space(path):
    """(data, root node) of a YAML file, read as the YAML language server reads it."""
    text = path.read_text(encoding="utf-8-sig")
    node = yaml.compose(text, Loader=CoreLoader)
    data = yaml.load(text, Loader=CoreLoader)
    return data, node


def node_at(node, path):
    """The YAML node at a JSON path of the data (keys and list indices), or the deepest one found."""
    for step in path:
        if isinstance(node, yaml.MappingNode):
            found = [v for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == str(step)]
            if not found:
                return node
            node = found[0]
        elif isinstance(node, yaml.SequenceNode) and isinstance(step, int) and step < len(node.value):
            node = node.value[step]
        else:
            return node
    return node


def lines_of(node):
    """The first and last line (from 1) of a node; an empty document is line 1."""
    if node is None:
        return 1, 1
    return node.start_mark.line + 1, node.end_mark.line + 1


def where(error):
    return "/".join(str(p) for p in error.absolute_path) or "(top level)"


def validator(source):
    schema = json.loads((source / SCHEMA_PATH).read_text(encoding="utf-8"))
    jsonschema.Draft7Validator.check_schema(schema)
    return schema, jsonschema.Draft7Validator(schema)


# --- the schema itself -------------------------------------------------------------------------

def walk(schema, pointer="#"):
    """Every subschema with its JSON pointer."""
    if isinstance(schema, dict):
        yield pointer, schema
        for key, value in schema.items():
            if key in ("properties", "definitions"):
                for name, sub in value.items():
                    yield from walk(sub, f"{pointer}/{key}/{name}")
            elif key in ("anyOf", "allOf", "oneOf", "items") and isinstance(value, list):
                for i, sub in enumerate(value):
                    yield from walk(sub, f"{pointer}/{key}/{i}")
            elif key in ("additionalProperties", "additionalItems", "items", "propertyNames", "not"):
                yield from walk(value, f"{pointer}/{key}")


def check_schema_shape(schema):
    failures = []
    for pointer, sub in walk(schema):
        for name, prop in sub.get("properties", {}).items():
            if not str(prop.get("description", "")).strip():
                failures.append(f"{pointer}/properties/{name} has no description (editors show it as hover help)")
        if "properties" in sub and sub.get("additionalProperties") is not False:
            failures.append(f"{pointer} lists properties but does not refuse others (the loader refuses unknown keys)")
    return failures


# --- the loader's key lists against the schema ---------------------------------------------------

def loader_words(source, file, array):
    """The string literals of `constexpr ... ARRAY[] = {...};` in tuner/src/space/FILE."""
    text = (source / "tuner/src/space" / file).read_text(encoding="utf-8")
    match = re.search(r"\b" + array + r"\[\]\s*=\s*\{(.*?)\};", text, re.S)
    if not match:
        raise AssertionError(f"tuner/src/space/{file}: no array {array}[] (the test reads the loader's key lists)")
    return set(re.findall(r'"([^"]*)"', match.group(1)))


def element_type_names(source):
    text = (source / "tuner/src/space/space.cpp").read_text(encoding="utf-8")
    names = set(re.findall(r'case ElementType::\w+: return "(\w+)";', text))
    if not names:
        raise AssertionError("tuner/src/space/space.cpp: element_type_name's cases not found")
    return names


def alternative(alternatives, key):
    """The map alternative of an anyOf that has the property `key`."""
    for alt in alternatives:
        if key in alt.get("properties", {}):
            return alt
    raise AssertionError(f"the schema has no alternative with the key '{key}'")


def one_key_maps(alternatives):
    """The keys of the one-key map alternatives of an anyOf (init kinds, reference kinds)."""
    keys = set()
    for alt in alternatives:
        alt = alt if "$ref" not in alt else None
        if alt and alt.get("type") == "object":
            keys |= set(alt["properties"])
    return keys


def check_loader_lists(source, schema):
    d = schema["definitions"]
    enum_of = lambda alts: {w for a in alts for w in a.get("enum", [])}
    reference_maps = set()
    for alt in d["reference"]["anyOf"]:
        if alt.get("type") == "object":
            reference_maps |= set(alt["required"][:1])
    pairs = [
        ("space.cpp kTopKeys", loader_words(source, "space.cpp", "kTopKeys"), set(schema["properties"])),
        ("space.cpp kLaunchKeys", loader_words(source, "space.cpp", "kLaunchKeys"), set(d["launch"]["properties"])),
        ("space.cpp kMetricKeys", loader_words(source, "space.cpp", "kMetricKeys"),
         set(schema["properties"]["metrics"]["properties"])),
        ("space.cpp kRangeKeys", loader_words(source, "space.cpp", "kRangeKeys"),
         set(d["range"]["properties"]) | set(d["pow2"]["properties"])),
        ("space.cpp kPythonKeys", loader_words(source, "space.cpp", "kPythonKeys"), set(d["python"]["properties"])),
        ("load_data.cpp kBufferKeys", loader_words(source, "load_data.cpp", "kBufferKeys"), set(d["buffer"]["properties"])),
        ("load_data.cpp kGlobalKeys", loader_words(source, "load_data.cpp", "kGlobalKeys"), set(d["global"]["properties"])),
        ("load_data.cpp kArgKeys", loader_words(source, "load_data.cpp", "kArgKeys"),
         one_key_maps(d["argument"]["anyOf"])),
        ("load_data.cpp kSimpleInits", loader_words(source, "load_data.cpp", "kSimpleInits"), enum_of(d["init"]["anyOf"])),
        ("load_data.cpp kInitKinds", loader_words(source, "load_data.cpp", "kInitKinds"), one_key_maps(d["init"]["anyOf"])),
        ("load_data.cpp kNormalKeys", loader_words(source, "load_data.cpp", "kNormalKeys"),
         set(alternative(d["init"]["anyOf"], "normal")["properties"]["normal"]["properties"])),
        ("load_data.cpp kCsrKeys", loader_words(source, "load_data.cpp", "kCsrKeys"),
         set(alternative(d["init"]["anyOf"], "csr_offsets")["properties"]["csr_offsets"]["properties"])),
        ("load_data.cpp kVectorTypes + element types",
         loader_words(source, "load_data.cpp", "kVectorTypes") | element_type_names(source),
         set(d["bufferType"]["anyOf"][0]["enum"])),
        ("space.cpp element_type_name", element_type_names(source), set(d["elementType"]["anyOf"][0]["enum"])),
        ("load_verify.cpp kVerifyKeys", loader_words(source, "load_verify.cpp", "kVerifyKeys"),
         set(alternative(d["verify"]["anyOf"], "reference")["properties"])),
        ("load_verify.cpp kReferenceKinds + library", loader_words(source, "load_verify.cpp", "kReferenceKinds") | {"library"},
         reference_maps),
        ("load_verify.cpp kLibraryKeys", loader_words(source, "load_verify.cpp", "kLibraryKeys"),
         set(alternative(d["reference"]["anyOf"], "library")["properties"])),
        ("load_verify.cpp kKernelKeys", loader_words(source, "load_verify.cpp", "kKernelKeys"),
         set(d["referenceKernel"]["properties"])),
        ("load_verify.cpp kOutputKeys", loader_words(source, "load_verify.cpp", "kOutputKeys"),
         set(d["outputCheck"]["properties"])),
        ("load_verify.cpp kCompares", loader_words(source, "load_verify.cpp", "kCompares"),
         set(d["outputCheck"]["properties"]["compare"].get("enum", []))),
        ("load_allowed.cpp kAllowedKeys", loader_words(source, "load_allowed.cpp", "kAllowedKeys"),
         set(schema["properties"]["allowed"]["properties"])),
        ("loader.hpp kFunctions", loader_words(source, "loader.hpp", "kFunctions"), set(d["name"]["not"]["enum"])),
        ("load_checks.cpp kCompilerNames", loader_words(source, "load_checks.cpp", "kCompilerNames"),
         set(d["compiledName"]["not"]["anyOf"][0]["enum"])),
    ]
    failures = []
    for what, loader, ours in pairs:
        if loader != ours:
            failures.append(f"{what} differs from the schema: loader only {sorted(loader - ours)}, "
                            f"schema only {sorted(ours - loader)}")
    # The keys the loader requires at the top level (require(top, root, ...), and verify).
    space_cpp = (source / "tuner/src/space/space.cpp").read_text(encoding="utf-8")
    required = set(re.findall(r'require\(top, root, "(\w+)"', space_cpp)) | {"verify"}
    if required != set(schema["required"]):
        failures.append(f"required top-level keys: loader {sorted(required)}, schema {sorted(schema['required'])}")
    return failures


# --- spaces -------------------------------------------------------------------------------------

def space_files(source):
    """(shipped, good, bad): the YAML files of configs/ and examples/ (the walkthrough's and the
    capture example's spaces), and of tests/ (bad: tests/spaces/bad/)."""
    shipped = sorted((source / "configs").rglob("*.yaml")) + sorted((source / "examples").rglob("*.yaml"))
    bad_dir = source / "tests/spaces/bad"
    tests = sorted(p for ext in ("*.yaml", "*.yml") for p in (source / "tests").rglob(ext)
                   if "node_modules" not in p.parts)
    good = [p for p in tests if bad_dir not in p.parents]
    bad = [p for p in tests if bad_dir in p.parents]
    return shipped, good, bad


def check_good(source, check, files):
    failures = []
    for path in files:
        data, node = read_space(path)
        errors = sorted(check.iter_errors(data), key=lambda e: list(map(str, e.absolute_path)))
        for e in errors:
            line = lines_of(node_at(node, e.absolute_path))[0]
            failures.append(f"{path.relative_to(source)}:{line}: {where(e)}: {e.message[:300]}")
        if not errors:
            print(f"ok   {path.relative_to(source)}")
    return failures


def check_modelines(source, shipped, good):
    failures = []
    schema_file = (source / SCHEMA_PATH).resolve()
    for path in shipped + good:
        lines = path.read_text(encoding="utf-8-sig").splitlines()
        marks = [m.group(1) for m in map(MODELINE.match, lines) if m]
        shown = path.relative_to(source)
        if not marks:
            continue
        target = (path.parent / marks[0]).resolve()
        if target != schema_file or not target.is_file():
            failures.append(f"{shown}: the modeline names {marks[0]}, which is {target}, not {schema_file}")
        first_content = next((i for i, l in enumerate(lines) if l.strip() and not l.lstrip().startswith("#")), len(lines))
        if lines.index(next(l for l in lines if MODELINE.match(l))) > first_content:
            failures.append(f"{shown}: the modeline comes after YAML content (the language server ignores it there)")
    # The example modeline of the editor page is for a space in configs/.
    page = "docs/reference/editor.md"
    shown = [m.group(1) for m in map(MODELINE.match, (source / page).read_text(encoding="utf-8").splitlines()) if m]
    if not shown:
        failures.append(f"{page} shows no '# yaml-language-server: $schema=...' modeline")
    for mark in shown:
        if (source / "configs" / mark).resolve() != schema_file:
            failures.append(f"{page}: the modeline $schema={mark} does not name {SCHEMA_PATH} from configs/")
    return failures


# Bad spaces the schema rejects, by the rule that rejects each.
STRUCTURAL = {
    "args_empty": "args has at least one item",
    "arg_decimal_needs_type": "a bare argument is a name, an expression or an integer",
    "bad_param_name": "param names are identifiers",
    "block_empty": "1 to 3 dimensions",
    "block_zero": "a constant dimension is at least 1",
    "bool_value": "param values are integers, numbers or words",
    "buffer_bad_init": "init words: zero, random, iota, none",
    "buffer_count_zero": "a constant count is at least 1",
    "buffer_missing_count": "count is required",
    "buffer_output_not_bool": "output is a boolean",
    "compare_unknown": "compare: elements, sum, none",
    "constraint_map": "a map as a constraint is {python: ...}",
    "constraints_not_list": "constraints is a list",
    "csr_offsets_without_nnz": "csr_offsets takes nnz or density",
    "dup_value": "a param's values are unique",
    "empty": "a space is a map",
    "entry_not_string": "entry is a string",
    "global_bad_name": "globals are C++ names",
    "grid_four_dims": "at most 3 dimensions",
    "init_unknown": "init maps: constant, uniform, normal, file, copy, csr_offsets, csr_columns",
    "kernel_not_identifier": "kernel is an identifier",
    "launch_not_map": "launch is a map",
    "metrics_unknown_key": "metrics: bytes, flops",
    "missing_args": "args is required",
    "missing_block": "block is required",
    "missing_source": "source is required",
    "mixed_value_kinds": "a param's values are all integers, all numbers or all words",
    "name_too_long": "names are at most 128 characters",
    "options_not_list": "options is a list",
    "param_builtin": "a param is no CUDA name",
    "param_empty_list": "a param has at least one value",
    "param_keyword": "a param is no C++ keyword",
    "param_null": "a param has values",
    "param_predefined_macro": "a param is no reserved name",
    "param_reserved_underscore": "a param is no reserved name",
    "params_empty": "params has at least one param",
    "pow2_one_bound": "pow2 has two bounds",
    "problem_not_map": "problem is a map",
    "quoted_int": "a quoted number among integers mixes words and integers",
    "range_mixed_pow2": "a range is {from, to, step} or {pow2}",
    "range_zero_step": "step is at least 1",
    "real_problem_size": "problem sizes are integers",
    "reserved_name": "a name is not an expression function's",
    "shared_negative": "a constant shared_bytes is 0 or more",
    "shared_null": "shared_bytes is an expression",
    "split_in_flow_map": "YAML's split leaves a key the buffer does not have",
    "text_value_too_long": "a word is at most 128 characters",
    "top_level_list": "a space is a map",
    "unknown_buffer_key": "buffer keys: type, count, init, output",
    "unknown_key": "the top-level keys",
    "unknown_launch_key": "launch keys: grid, block, shared_bytes",
    "unknown_range_key": "range keys: from, to, step",
    "verify_bad_reference": "reference: none or a map",
    "verify_command_empty": "command names a program",
    "verify_command_item_map": "command items are strings",
    "verify_command_not_list": "command is a list",
    "verify_cpu": "reference: none or a map",
    "verify_missing": "verify is required",
    "verify_negative_tol": "tolerances are 0 or more",
    "verify_old_reference_config": "reference maps: builtin, config, kernel, files, library",
    "verify_tol_not_number": "tolerances are numbers",
    "verify_two_references": "one reference",
    "word_and_boolean": "param values are integers, numbers or words",
}
# Bad spaces whose expected error reads as structural but that the schema cannot see.
NOT_STRUCTURAL = {
    "default_not_int": "whether 'big' is a value depends on the param's kind (a text param takes words)",
}
LOOKS_STRUCTURAL = re.compile(r"unknown key|missing required key|expected (a|an|true or false)\b")


def expectation(path):
    first = path.read_text(encoding="utf-8-sig").split("\n", 1)[0]
    match = re.match(r"^# expect: (\d+):(\d+): (.*\S)\s*$", first)
    if not match:
        raise AssertionError(f"{path}: first line is not '# expect: LINE:COL: SUBSTRING'")
    return int(match.group(1)), match.group(3)


def check_bad(source, check, files):
    failures = []
    by_name = {p.stem: p for p in files}
    for name in sorted(set(STRUCTURAL) | set(NOT_STRUCTURAL)):
        if name not in by_name:
            failures.append(f"tests/spaces/bad/{name}.yaml is listed here but does not exist")
    for path in files:
        line, message = expectation(path)
        if LOOKS_STRUCTURAL.search(message) and path.stem not in STRUCTURAL and path.stem not in NOT_STRUCTURAL:
            failures.append(f"{path.relative_to(source)} expects '{message}': list it in STRUCTURAL (with the schema "
                            "rule that rejects it) or in NOT_STRUCTURAL (with why the schema cannot)")
        if path.stem not in STRUCTURAL:
            continue
        shown = path.relative_to(source)
        try:
            data, node = read_space(path)
        except yaml.YAMLError as e:
            failures.append(f"{shown}: not readable as YAML 1.2: {e}")
            continue
        errors = list(check.iter_errors(data))
        misplaced = []
        if not errors:
            failures.append(f"{shown}: valid against the schema, but the loader refuses it ({message}); "
                            f"the schema should: {STRUCTURAL[path.stem]}")
            continue
        for e in errors:
            first, last = lines_of(node_at(node, e.absolute_path))
            if not first <= line <= last:
                misplaced.append(f"{shown}: the schema's error at {where(e)} (lines {first}-{last}: "
                                 f"{e.message[:200]}) is not at line {line}, where the loader fails ({message})")
        failures += misplaced
        if not misplaced:
            print(f"bad  {shown}: rejected ({STRUCTURAL[path.stem]})")
    return failures


# Mistakes made here on configs/transpose.yaml: each must make it invalid.
def _set(path, value):
    def apply(space):
        node = space
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
    return apply


def _drop(path):
    def apply(space):
        node = space
        for key in path[:-1]:
            node = node[key]
        del node[path[-1]]
    return apply


MISTAKES = {
    "an unknown top-level key 'constraint'": _set(["constraint"], ["TILE > 1"]),
    "no kernel": _drop(["kernel"]),
    "no launch": _drop(["launch"]),
    "no params": _drop(["params"]),
    "launch.grid missing": _drop(["launch", "grid"]),
    "an unknown buffer key 'size'": _set(["buffers", "in", "size"], 4),
    "a buffer's count as a list": _set(["buffers", "in", "count"], ["N", "N"]),
    "a buffer's type as a number": _set(["buffers", "in", "type"], 4),
    "output: yes (a word in YAML 1.2)": _set(["buffers", "out", "output"], "yes"),
    "init: gaussian": _set(["buffers", "in", "init"], "gaussian"),
    "init with two kinds": _set(["buffers", "in", "init"], {"constant": 1, "copy": "out"}),
    "rtol as a word": _set(["verify", "rtol"], "tight"),
    "verify without reference": _drop(["verify", "reference"]),
    "reference: cpu": _set(["verify", "reference"], "cpu"),
    "a param's value a map of nothing known": _set(["params", "TILE"], {"values": [16, 32]}),
    "a param named with a dash": _set(["params", "TILE-X"], [1]),
    "problem_defines as a word": _set(["problem_defines"], "on"),
    "an argument as a list": _set(["args"], ["in", "out", ["N"]]),
    "an argument map without value": _set(["args"], ["in", "out", {"type": "int"}]),
    "metrics.bytes as a list": _set(["metrics", "bytes"], ["N"]),
    "grid as a {python} map (only items may be)": _set(["launch", "grid"], {"python": "N"}),
    "an unknown output check key": _set(["verify", "outputs"], {"out": {"tolerance": 1}}),
    "allowed without file": _set(["allowed"], {"csv": "a.csv"}),
}


def check_mistakes(source, check):
    base, _ = read_space(source / "configs/transpose.yaml")
    failures = [f"configs/transpose.yaml (the base of MISTAKES): {e.message}" for e in check.iter_errors(base)]
    for what, apply in MISTAKES.items():
        space = copy.deepcopy(base)
        apply(space)
        if check.is_valid(space):
            failures.append(f"configs/transpose.yaml with {what}: valid against the schema, but the loader refuses it")
        else:
            print(f"bad  configs/transpose.yaml with {what}: rejected")
    return failures


def main():
    if len(sys.argv) != 2:
        print(__doc__.split("\n\n")[1])
        return 2
    source = Path(sys.argv[1]).resolve()
    schema, check = validator(source)
    shipped, good, bad = space_files(source)
    failures = []
    if len(shipped) < 8 or len(good) < 15 or len(bad) < 100:
        failures.append(f"found {len(shipped)} shipped, {len(good)} good and {len(bad)} bad spaces under {source}: "
                        "fewer than there are")
    failures += check_schema_shape(schema)
    failures += check_loader_lists(source, schema)
    failures += check_good(source, check, shipped + good)
    failures += check_modelines(source, shipped, good)
    failures += check_bad(source, check, bad)
    failures += check_mistakes(source, check)
    for f in failures:
        print("FAIL " + f)
    print(f"{len(shipped)} shipped, {len(good)} good test spaces, {len(STRUCTURAL)} structural bad ones, "
          f"{len(MISTAKES)} mistakes: {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
