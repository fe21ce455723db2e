#!/usr/bin/python3
"""Validates scenario files against kvbill's JSON Schema with an independent
validator: the jsonschema package (Debian: python3-jsonschema), Draft 2020-12.

usage: check_schema.py SCHEMA.json SOURCE_DIR

Every bundled scenario (scenarios/*.json but the catalogs gpus.json and
prices.json, scenarios/examples/*.json, scenarios/claims/*.json) must pass;
each scenario of INVALID below must fail. Prints one line per file and
exits 0 only when all are as expected; exits 3 when jsonschema is missing
(never a silent skip).
"""
import glob
import json
import os
import sys

try:
    import jsonschema
except ImportError:
    print("check_schema.py: the Python package jsonschema is missing: "
          "install Debian's python3-jsonschema (tools/setup does)", file=sys.stderr)
    sys.exit(3)

# Scenarios that break what the schema says, and why.
INVALID = {
    "unknown key": {"deployment": {"gpu_count": 8}},
    "integer below its minimum": {"deployment": {"gpus_per_replica": 0}},
    "fraction above 1": {"deployment": {"memory_fraction": 1.5}},
    "not a token count": {"engine": {"max_num_batched_tokens": "8q"}},
    "unknown router": {"engine": {"router": "random"}},
    "both file and generator": {"trace": {"file": "t.jsonl", "generator": "chat", "tasks": 1}},
    "generator without tasks": {"trace": {"generator": "chat"}},
    "parameter of another kind": {
        "context_policy": {"kind": "sliding_window", "window_tokens": 8, "recent_tokens": 8}},
    "missing parameter": {"context_policy": {"kind": "summarise", "threshold_tokens": 9}},
    "key and its vLLM name": {"deployment": {"gpus_per_replica": 2, "tensor_parallel_size": 2}},
    "vLLM value kvbill has no format for": {"kv_cache_dtype": "fp8_ds_mla"},
    "pricing without a provider": {"pricing": {"model": "claude-sonnet-4-5"}},
    "unknown budget metric": {"budgets": {"speed": {"max": 1}}},
    "sweep axis that is not a pointer": {"sweep": {"kv_format": ["fp8"]}},
}


def main():
    schema_path, source_dir = sys.argv[1], sys.argv[2]
    with open(schema_path) as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    files = []
    for pattern in ("scenarios/*.json", "scenarios/examples/*.json", "scenarios/claims/*.json"):
        files += sorted(glob.glob(os.path.join(source_dir, pattern)))
    files = [f for f in files if os.path.basename(f) not in ("gpus.json", "prices.json")]
    failures = 0
    for path in files:
        with open(path) as f:
            errors = list(validator.iter_errors(json.load(f)))
        rel = os.path.relpath(path, source_dir)
        if errors:
            failures += 1
            print("FAIL %s: %s at %s" % (rel, errors[0].message, errors[0].json_path))
        else:
            print("ok   %s" % rel)
    for why, doc in INVALID.items():
        if validator.is_valid(doc):
            failures += 1
            print("FAIL invalid scenario accepted (%s): %s" % (why, json.dumps(doc)))
        else:
            print("ok   rejected: %s" % why)
    print("%d bundled scenarios, %d invalid ones, %d failures" % (len(files), len(INVALID), failures))
    sys.exit(1 if failures or not files else 0)


main()
