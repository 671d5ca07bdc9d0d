#!/usr/bin/env python3
"""Checks kafka-verifiable-producer output against kafka-verifiable-consumer output.

usage: verify.py --producer P.json [P2.json ...] --consumer C.json [C2.json ...]

Every record a producer reports as acked (producer_send_success: topic,
partition, offset) must lie in a range that a consumer reports as consumed
(records_consumed: per partition minOffset..maxOffset). Prints one JSON
summary line on stdout; exit status 0 if nothing acked is missing, 1 if
something is, 2 on bad input.
"""
import argparse
import json
import sys
from collections import defaultdict


def events(path):
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line.startswith("{"):
                continue
            try:
                yield json.loads(line)
            except json.JSONDecodeError as e:
                print(f"{path}:{n}: bad JSON: {e}", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--producer", nargs="+", required=True)
    ap.add_argument("--consumer", nargs="+", required=True)
    a = ap.parse_args()

    acked = defaultdict(set)  # (topic, partition) -> offsets
    sent = send_errors = 0
    for p in a.producer:
        for e in events(p):
            name = e.get("name")
            if name == "producer_send_success":
                acked[(e["topic"], e["partition"])].add(e["offset"])
            elif name == "producer_send_error":
                send_errors += 1
            elif name == "tool_data":
                sent += e.get("sent", 0)

    ranges = defaultdict(list)  # (topic, partition) -> [(min, max)]
    consumed = commits = commit_failures = rebalances = 0
    for c in a.consumer:
        for e in events(c):
            name = e.get("name")
            if name == "records_consumed":
                consumed += e.get("count", 0)
                for p in e.get("partitions", []):
                    ranges[(p["topic"], p["partition"])].append((p["minOffset"], p["maxOffset"]))
            elif name == "offsets_committed":
                commits += 1
                if not e.get("success", True):
                    commit_failures += 1
            elif name == "partitions_assigned":
                rebalances += 1

    missing = 0
    examples = []
    for tp, offs in acked.items():
        merged = merge(ranges.get(tp, []))
        for off in sorted(offs):
            if not any(lo <= off <= hi for lo, hi in merged):
                missing += 1
                if len(examples) < 5:
                    examples.append(f"{tp[0]}-{tp[1]}@{off}")
    n_acked = sum(len(v) for v in acked.values())
    unique = sum(hi - lo + 1 for rs in ranges.values() for lo, hi in merge(rs))
    summary = {
        "sent": sent,
        "acked": n_acked,
        "send_errors": send_errors,
        "consumed": consumed,
        "consumed_unique_offsets": unique,
        "duplicates": consumed - unique,
        "acked_not_consumed": missing,
        "examples_missing": examples,
        "partitions": len(acked),
        "commits": commits,
        "commit_failures": commit_failures,
        "assignments": rebalances,
        "ok": missing == 0 and n_acked > 0,
    }
    print(json.dumps(summary))
    return 0 if summary["ok"] else 1


def merge(rs):
    out = []
    for lo, hi in sorted(rs):
        if out and lo <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


if __name__ == "__main__":
    sys.exit(main())
