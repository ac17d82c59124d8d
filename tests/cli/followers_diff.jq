# Compare the cohorts two followers recorded of the same command (jq, not
# python: t1710 runs in the arm64 guest too, where there is no python).
#
#   jq -n -r --slurpfile p PTRACE.bundle/data/cohort.jsonl \
#            --slurpfile e EBPF.bundle/data/cohort.jsonl \
#            --argjson cpu false|true -f followers_diff.jq
#
# Pids differ between two runs, so incarnations are compared by what does
# not depend on the run: each one's path from the root (the exec chains of
# its ancestors and its own), its exit (kind and code or signal) and its
# number of threads, as a multiset.  With cpu true, the CPU time (user +
# system) of the incarnations that did the same work must agree within 25 %
# or 15 ms (docs/ebpf-follower.md).  Prints "same" or the differences.

# one object per incarnation id: parent, exec paths, threads, exit, cpu
def incs:
  (.[1:]) as $r
  | (reduce ($r[] | select(.type == "incarnation")) as $i ({};
        .[$i.id] = {parent: $i.parent, exec: [], tids: 0, cpu: 0, ncpu: 0}))
  | reduce ($r[] | select(.type != "incarnation")) as $x (.;
        if $x.type == "exec" then .[$x.inc].exec += [$x.path]
        elif $x.type == "thread" then .[$x.inc].tids += 1
        elif $x.type == "end" then .[$x.inc].exit = [$x.exit, ($x.code // $x.signal)]
        elif $x.type == "resource" and $x.status == "ok"
             and ($x.field == "cpu_user_ns" or $x.field == "cpu_system_ns")
        then .[$x.inc].cpu += $x[$x.field] | .[$x.inc].ncpu += 1
        else . end);

def lineage($m): if .parent then ($m[.parent] | lineage($m)) + [.exec] else [.exec] end;

# {key: {n, cpu: [ns...]}}, key = [lineage, exit kind, code or signal, threads]
def shape:
  incs as $m
  | reduce ($m[]) as $i ({};
      ([($i | lineage($m)), $i.exit[0], $i.exit[1], $i.tids] | tojson) as $k
      | .[$k].n += 1
      | if $i.ncpu == 2 then .[$k].cpu += [$i.cpu] else . end);

($p | shape) as $a | ($e | shape) as $b
| ([($a + $b) | keys[] as $k
    | select(($a[$k].n // 0) != ($b[$k].n // 0))
    | "\($k): ptrace \($a[$k].n // 0), ebpf \($b[$k].n // 0)"]
   + if $cpu then
       [$a | keys[] as $k
        | select(($a[$k].cpu | length) == 1 and ($b[$k].cpu // [] | length) == 1)
        | $a[$k].cpu[0] as $x | $b[$k].cpu[0] as $y
        | select((($x - $y) | fabs) > ([0.25 * ([$x, $y] | max), 15e6] | max))
        | "\($k | fromjson | .[0][-1]): cpu ptrace \($x / 1e6) ms, ebpf \($y / 1e6) ms"]
     else [] end) as $bad
| if ($bad | length) == 0 then "same" else $bad[] end
