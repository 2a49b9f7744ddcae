#!/usr/bin/env bash
# Regenerates the code API machinery needs from the types under api/:
#   api/<group>/v1/types_swagger_doc_generated.go
#                                             hack/swaggerdoc (SwaggerDoc: the descriptions kubectl explain shows)
#   api/<group>/v1/zz_generated.deepcopy.go   deepcopy-gen (DeepCopyObject: the types are runtime.Objects)
#   api/client/clientset/versioned/...        client-gen (typed clientset and its fake)
#   api/client/listers/...                    lister-gen
#   api/client/informers/externalversions/... informer-gen
# Run it after changing a type, a doc comment or a +genclient / +k8s: tag under api/
# (docs/development.md, "Generated code"); hack/verify-codegen.sh, which
# .ci/run runs, fails while the generated code is stale.
#
# Usage: hack/update-codegen.sh [ROOT]
# ROOT (default: this repository) is the module to generate in;
# verify-codegen.sh passes a scratch copy.
#
# The generators are k8s.io/code-generator at the version of our
# k8s.io/api, installed with `go install` into Go's bin directory (GOBIN,
# else GOPATH/bin) and reused while they are that version, like .ci/run's
# golangci-lint. They are not a module dependency, so go.mod stays free of
# the generator's own requirements.
set -euo pipefail

root="$(cd "${1:-$(dirname "$0")/..}" && pwd)"
cd "$root"

module="github.com/dnsplane/dnsplane"
# Group directories under api/, each with a v1 package. client-gen names a
# group's Go package and accessor after its directory (core → CoreV1()); the
# API group itself is each doc.go's +groupName.
groups=(core apps batch operator)
generators=(deepcopy-gen client-gen lister-gen informer-gen)

version="$(go list -m -f '{{.Version}}' k8s.io/api)"
gobin="$(go env GOBIN)"
if [ -z "$gobin" ]; then
	gopath="$(go env GOPATH)"
	gobin="${gopath%%:*}/bin"
fi

# A binary is reusable when `go version -m` shows it was built from
# k8s.io/code-generator at $version.
installed() {
	[ -x "$gobin/$1" ] && go version -m "$gobin/$1" 2>/dev/null |
		grep -q "^[[:space:]]*mod[[:space:]]*k8s.io/code-generator[[:space:]]*$version[[:space:]]"
}
missing=()
for g in "${generators[@]}"; do
	installed "$g" || missing+=("k8s.io/code-generator/cmd/$g@$version")
done
if [ "${#missing[@]}" -gt 0 ]; then
	echo "codegen: installing k8s.io/code-generator $version generators into $gobin" >&2
	# Outside any module, so this repository's go.mod is neither read nor
	# changed; -buildvcs=false as .ci/run builds its tools.
	(cd / && GOFLAGS=-buildvcs=false GOBIN="$gobin" go install "${missing[@]}")
fi

pkgs=()
inputs=()
for g in "${groups[@]}"; do
	pkgs+=("$module/api/$g/v1")
	inputs+=(--input "$g/v1")
done
# No license header: dnsplane's sources carry none. The generators still
# write their "Code generated ... DO NOT EDIT." line, which is what gofmt,
# golangci-lint and reviewers go by.
header=/dev/null
client="$module/api/client"
# Resource names the generators' English pluralizer gets wrong; they must
# match api/resources.go's plurals (TestGeneratedResourcesAreServed in
# api/client checks).
plurals="DNS:DNSes"

# Start from nothing, so a removed type or tag leaves no stale file behind.
rm -f api/*/v1/zz_generated.deepcopy.go api/*/v1/types_swagger_doc_generated.go
rm -rf api/client/clientset api/client/listers api/client/informers

# First, as in k8s.io/kubernetes's hack/update-codegen.sh: the SwaggerDoc
# methods are part of the packages the other generators load. hack/swaggerdoc
# is ours (it calls k8s.io/apimachinery's runtime.ParseDocumentationFrom and
# WriteSwaggerDocFunc, as upstream's cmd/genswaggertypedocs does), so it is
# built from this module rather than installed.
dirs=()
for g in "${groups[@]}"; do
	dirs+=("api/$g/v1")
done
go run ./hack/swaggerdoc "${dirs[@]}"

"$gobin/deepcopy-gen" --go-header-file "$header" \
	--output-file zz_generated.deepcopy.go \
	"${pkgs[@]}"

"$gobin/client-gen" --go-header-file "$header" --plural-exceptions "$plurals" \
	--output-dir api/client/clientset --output-pkg "$client/clientset" \
	--clientset-name versioned \
	--input-base "$module/api" "${inputs[@]}"

"$gobin/lister-gen" --go-header-file "$header" --plural-exceptions "$plurals" \
	--output-dir api/client/listers --output-pkg "$client/listers" \
	"${pkgs[@]}"

"$gobin/informer-gen" --go-header-file "$header" --plural-exceptions "$plurals" \
	--output-dir api/client/informers --output-pkg "$client/informers" \
	--versioned-clientset-package "$client/clientset/versioned" \
	--listers-package "$client/listers" \
	"${pkgs[@]}"
