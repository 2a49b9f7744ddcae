#!/usr/bin/env bash
# Fails (exit 1, printing the diff) when the generated code under api/ is not
# what hack/update-codegen.sh produces from the current types and tags. It
# regenerates into a scratch copy of the module, so the working tree is never
# touched. .ci/run runs it after go vet.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

# The generators read only the api/ packages and their dependencies
# (resolved through go.mod/go.sum from the module cache); hack/ brings the
# script itself.
cp -R "$root/go.mod" "$root/go.sum" "$root/api" "$root/hack" "$scratch/"
"$scratch/hack/update-codegen.sh" "$scratch"

if ! diff -ruN "$root/api" "$scratch/api"; then
	echo "verify-codegen: the generated code under api/ is stale; run hack/update-codegen.sh" >&2
	exit 1
fi
