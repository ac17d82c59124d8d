#!/usr/bin/env bats
# pmurec --env-allow (issue 12): comma-separated names, options accumulate,
# and what is not an environment variable name is refused, never silently
# recorded as nothing.

load helpers
bats_require_minimum_version 1.5.0

setup() {
	needs_backend linux
	cd "$BATS_TEST_TMPDIR"
}

@test "--env-allow A,B,C records each variable; options accumulate; secrets stay redacted" {
	A=1 B=2 C=3 D=4 MY_TOKEN=s3cr3t pmurec -m none --env-allow A,B,C --env-allow D,A,MY_TOKEN -o e.bundle -- true
	run $PY -c 'import json; print(sorted(json.load(open("e.bundle/data/provenance.json"))["environment"].items()))'
	assert_output "[('A', '1'), ('B', '2'), ('C', '3'), ('D', '4'), ('MY_TOKEN', '<redacted>')]"
	run pmuvalidate -q e.bundle
	assert_success
}

@test "--env-allow refuses what is not an environment variable name" {
	for bad in 'A,B-C' 'A,' ',A' '1A' 'A=B' ''; do
		run pmurec -m none --env-allow "$bad" -o e.bundle -- touch ran
		assert_failure 2
		assert_output --partial "pmurec: --env-allow '$bad': "
		assert_output --partial "is not an environment variable name"
		[ ! -e e.bundle ] && [ ! -e ran ]
	done
}
