// Package registry maps every kind of api.Resources to its strategy: the
// one place per-kind behaviour is chosen. The API server's generic REST
// code and `dnsplane validate` both take their strategies from here, so the
// server and the offline tool apply the same rules.
package registry

import (
	"log/slog"

	"k8s.io/apimachinery/pkg/runtime/schema"

	dpoperatorv1 "github.com/dnsplane/dnsplane/api/operator/v1"
	"github.com/dnsplane/dnsplane/internal/registry/apps/deployment"
	"github.com/dnsplane/dnsplane/internal/registry/core/namespace"
	"github.com/dnsplane/dnsplane/internal/registry/core/node"
	"github.com/dnsplane/dnsplane/internal/registry/core/pod"
	"github.com/dnsplane/dnsplane/internal/registry/core/secret"
	"github.com/dnsplane/dnsplane/internal/registry/core/service"
	"github.com/dnsplane/dnsplane/internal/registry/operator/dns"
	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/registry/workload"
	"github.com/dnsplane/dnsplane/internal/validation"
)

// Config is what the strategies need from their host. The zero value
// serves offline validation: no cluster IPs, no namespace cascade.
type Config struct {
	// DNS are the pod DNS rules the feature gates enable.
	DNS validation.Options
	// ServiceIPs allocates Service cluster IPs; nil allocates none.
	ServiceIPs service.Allocator
	// NamespaceContents deletes a deleted namespace's contents.
	NamespaceContents namespace.ContentsDeleter
	// Logger reports what a strategy cannot return as an error.
	Logger *slog.Logger
	// ClusterDomain is the cluster DNS's cluster domain, which no DNS
	// forward plugin may take over; empty means cluster.local.
	ClusterDomain string
}

// Strategies returns the strategy of every kind api.Resources lists.
func Strategies(cfg Config) map[schema.GroupKind]rest.Strategy {
	carrier := func(status bool) workload.Strategy {
		return workload.Strategy{Default: rest.Default{Status: status}, DNS: cfg.DNS}
	}
	core := func(kind string) schema.GroupKind { return schema.GroupKind{Kind: kind} }
	apps := func(kind string) schema.GroupKind { return schema.GroupKind{Group: "apps", Kind: kind} }
	batch := func(kind string) schema.GroupKind { return schema.GroupKind{Group: "batch", Kind: kind} }
	return map[schema.GroupKind]rest.Strategy{
		core("Pod"):                   pod.Strategy{Strategy: carrier(true)},
		core("PodTemplate"):           carrier(false),
		core("ReplicationController"): carrier(true),
		apps("Deployment"):            deployment.Strategy{Strategy: carrier(true)},
		apps("ReplicaSet"):            carrier(true),
		apps("StatefulSet"):           carrier(true),
		apps("DaemonSet"):             carrier(true),
		batch("Job"):                  carrier(true),
		batch("CronJob"):              carrier(true),

		core("Namespace"): namespace.New(cfg.NamespaceContents),
		core("Service"):   service.New(cfg.ServiceIPs, cfg.Logger),
		core("Node"):      node.New(),
		core("Secret"):    secret.Strategy{},
		{Group: dpoperatorv1.GroupName, Kind: "DNS"}: dns.New(cfg.ClusterDomain),

		// Kinds with no rules of their own beyond metadata and the status
		// subresource split.
		core("ConfigMap"):      rest.Default{},
		core("Endpoints"):      rest.Default{},
		core("Event"):          rest.Default{},
		core("ServiceAccount"): rest.Default{},
		{Group: "discovery.k8s.io", Kind: "EndpointSlice"}: rest.Default{},
		{Group: "coordination.k8s.io", Kind: "Lease"}:      rest.Default{},
	}
}
