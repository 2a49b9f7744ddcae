// Package deploy holds dnsplane's install for a stock Kubernetes cluster:
// the Helm chart (helm/dnsplane) and the plain manifests rendered from it
// (manifests/dnsplane.yaml), documented in docs/kubernetes.md. Its tests
// check that the generated files are current and that every rendered
// object is valid; `go generate ./deploy` refreshes them:
//
//   - helm/dnsplane/files/dnses.operator.dnsplane.io.yaml: the DNS CRD,
//     `dnsplane operator --print-crd` (internal/operator/crd);
//   - helm/dnsplane/files/match-conditions.yaml: the webhooks' CEL match
//     conditions (internal/webhook's constants);
//   - manifests/dnsplane.yaml: `helm template` of the chart with the
//     namespace included, by Helm HelmVersion itself.
package deploy

//go:generate go test -run ^TestGeneratedFilesCurrent$ -update .

// HelmVersion is the Helm release that renders the manifests. CI
// installs it (.ci/run); the chart needs nothing newer.
const HelmVersion = "v3.22.0"
