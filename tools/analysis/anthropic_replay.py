#!/usr/bin/env python3
"""An independent replay of a single-chain Claude Code usage log under
Anthropic's rules, to check kvbill's numbers (tests/cost/api_replay_test.cc).

Usage: tools/analysis/anthropic_replay.py LOG.jsonl

Rules as in docs/billing.md#anthropic: the breakpoint of a call sits before
its recorded uncached input; a call reads the longest breakpoint of its
session still alive (used < 300 s ago) and writes from there to its own; a
read below 1,024 tokens (Sonnet 4.5's minimum) is none; the first call's
recorded read is seeded (warm start). Each session is one chain that only
grows (true of the SWEContextBench log: no subagents, no compaction).
Prices: Sonnet 4.5 list, $/Mtok 3 input, 3.75 5-minute write, 0.3 read, 15
output.
"""
import sys

from anthropic_misses import load


def cost(uncached, write, read, output):
    return (uncached * 3 + write * 3.75 + read * 0.3 + output * 15) / 1e6


def main(path):
    calls = within = 0
    predicted_read = recorded_read = predicted_cost = recorded_cost = 0.0
    for chain in load(path).values():
        last_use = {}  # breakpoint position -> time of last use
        for k, c in enumerate(chain):
            if k == 0 and c["r"] > 0:
                last_use[c["r"]] = c["t"]
            breakpoint = c["p"] - c["in"]
            alive = [q for q, t in last_use.items() if c["t"] - t < 300 and q <= breakpoint]
            read = max(alive, default=0)
            if read < 1024:
                read = 0
            if read > 0:
                last_use[read] = c["t"]
            last_use[breakpoint] = c["t"]
            calls += 1
            within += abs(read - c["r"]) <= 0.01 * c["r"]
            predicted_read += read
            recorded_read += c["r"]
            predicted_cost += cost(c["in"], breakpoint - read, read, c["out"])
            recorded_cost += cost(c["in"], c["w"], c["r"], c["out"])
    print(f"{calls} calls, {within} ({100 * within / calls:.2f}%) cache reads within 1%; "
          f"cache read {predicted_read:.0f} vs {recorded_read:.0f} "
          f"({100 * (predicted_read / recorded_read - 1):+.2f}%); bill ${predicted_cost:.2f} vs "
          f"${recorded_cost:.2f} ({100 * (predicted_cost / recorded_cost - 1):+.2f}%)")


if __name__ == "__main__":
    main(sys.argv[1])
