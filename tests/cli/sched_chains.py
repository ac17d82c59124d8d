#!/usr/bin/python3
"""sched_chains.py BUNDLE: for each off record with a chain, whether its
innermost frame (the saved user pc) lies in an executable mapping of the same
incarnation, as the sampling collector recorded them (maps.jsonl).  Prints
"N in M" (N chains of M placed) and the first unplaced ones."""
import json
import sys

b = sys.argv[1]
maps = {}
for line in open(f"{b}/data/collectors/sampling/maps.jsonl"):
    m = json.loads(line)
    if m.get("type") == "map":
        maps.setdefault(m["inc"], []).append((int(m["start"], 16), int(m["end"], 16)))
n = placed = 0
bad = []
for line in open(f"{b}/data/collectors/sched/sched.jsonl"):
    o = json.loads(line)
    if o.get("type") != "off" or "chain" not in o:
        continue
    n += 1
    pc = int(o["chain"].split()[0], 16)
    if any(s <= pc < e for s, e in maps.get(o["inc"], ())):
        placed += 1
    else:
        bad.append(f"{o['inc']} {hex(pc)}")
print(f"{placed} in {n}")
for x in bad[:5]:
    print("unplaced", x)
