#!/bin/sh
# In-process benchmarks named by the speed issue, in benchstat's format.
#
#   bench/inprocess.sh [count] > new.txt     then: benchstat old.txt new.txt
#
# (benchstat: go run golang.org/x/perf/cmd/benchstat@latest)
set -eu
count=${1:-6}
cd "$(dirname "$0")/.."
go test -run '^$' -count "$count" \
	-bench 'ReadDecision|WriteDecision|KernelFloor|BashDecision|Analyze(Typical|4KScript)|Decide10Rules|Decide20CELRules|DecideWithHistory|AppendDecision|WebFetchDecision|Resolve$|ServedRequest' \
	. ./toolpath ./rules/files ./rules/command ./rules/network ./shell ./policy/celrule ./sqlite ./hook
