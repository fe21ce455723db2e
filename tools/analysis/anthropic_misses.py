#!/usr/bin/env python3
"""Where Anthropic's prompt cache missed in a Claude Code usage log.

Usage: tools/analysis/anthropic_misses.py LOG.jsonl

A call "misses" when its recorded cache read is below 99% of the previous
call's read + write in the same session (the previous call's breakpoint),
less than 300 s after it. Prints where each miss read from, and compares the
misses with the hits by prompt growth and by the gap since the previous
call. docs/billing.md#api-mode quotes its output for the shared logs.
"""
import bisect
import collections
import datetime
import json
import sys


def load(path):
    sessions = collections.OrderedDict()
    seen = set()
    with open(path) as f:
        for line in f:
            d = json.loads(line)
            m = d.get("message", {})
            if d.get("type") != "assistant" or m.get("model") == "<synthetic>" or m["id"] in seen:
                continue
            seen.add(m["id"])
            u = m["usage"]
            t = datetime.datetime.fromisoformat(d["timestamp"].replace("Z", "+00:00")).timestamp()
            c = {"t": t, "in": u["input_tokens"], "w": u.get("cache_creation_input_tokens", 0),
                 "r": u.get("cache_read_input_tokens", 0), "out": u["output_tokens"]}
            c["p"] = c["in"] + c["w"] + c["r"]
            key = (d["sessionId"], d.get("isSidechain", False))
            sessions.setdefault(key, []).append(c)
    return sessions


def where(calls, k):
    """What position call k read from, among the session's known ones."""
    r = calls[k]["r"]
    ends = {c["r"] + c["w"] for c in calls[: k - 1]}
    first = calls[0]
    if r == 0:
        return "nothing"
    if r == first["r"]:
        return "the shared system prompt (first call's read)"
    if r in ends:
        return "an older call's breakpoint"
    if first["r"] < r < first["r"] + first["w"]:
        return "a point inside the first prompt"
    return "elsewhere"


def main(path):
    sessions = load(path)
    misses, hits = [], []
    places = collections.Counter()
    per_session = collections.Counter()
    for key, calls in sessions.items():
        for k in range(1, len(calls)):
            a, b = calls[k - 1], calls[k]
            gap = b["t"] - a["t"]
            if gap >= 300:
                continue
            row = (b["p"] - a["p"], gap)
            if b["r"] < 0.99 * (a["r"] + a["w"]):
                misses.append(row)
                places[where(calls, k)] += 1
                per_session[key] += 1
            else:
                hits.append(row)
    print(f"{len(hits) + len(misses)} calls < 300 s after the previous one; {len(misses)} misses "
          f"in {len(per_session)} sessions, the two most: {[n for _, n in per_session.most_common(2)]}")
    for place, n in places.most_common():
        print(f"  read {place}: {n}")

    def quantiles(xs):
        xs = sorted(xs)
        return [round(xs[int(len(xs) * q)], 1) for q in (0.1, 0.5, 0.9)]

    for name, rows in (("hits", hits), ("misses", misses)):
        print(f"{name}: prompt growth p10/p50/p90 {quantiles([g for g, _ in rows])} tokens, "
              f"gap {quantiles([t for _, t in rows])} s")
    edges = [1, 500, 2000, 5000]
    count, missed = collections.Counter(), collections.Counter()
    for rows, is_miss in ((hits, 0), (misses, 1)):
        for growth, _ in rows:
            b = bisect.bisect_right(edges, growth)
            count[b] += 1
            missed[b] += is_miss
    labels = ["<=0", "1-499", "500-1999", "2000-4999", ">=5000"]
    print("miss rate by prompt growth:",
          ", ".join(f"{labels[b]}: {missed[b]}/{count[b]}" for b in sorted(count)))


if __name__ == "__main__":
    main(sys.argv[1])
