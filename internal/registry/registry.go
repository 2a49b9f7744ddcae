// Package registry maps every kind of api.Resources to its strategy: the
// one place per-kind behaviour is chosen. The API server's generic REST
// code and `dnsplane validate` both take their strategies from here, so the
// server and the offline tool apply the same rules.
package registry

import (
	"crypto/tls"
	"log/slog"
	"net/netip"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	appsinternal "k8s.io/kubernetes/pkg/apis/apps"
	appsvalidation "k8s.io/kubernetes/pkg/apis/apps/validation"
	"k8s.io/kubernetes/pkg/apis/coordination"
	coordinationvalidation "k8s.io/kubernetes/pkg/apis/coordination/validation"
	"k8s.io/kubernetes/pkg/apis/core"
	corevalidation "k8s.io/kubernetes/pkg/apis/core/validation"
	"k8s.io/kubernetes/pkg/apis/networking"
	networkingvalidation "k8s.io/kubernetes/pkg/apis/networking/validation"
	"k8s.io/utils/clock"

	dpoperatorv1 "github.com/dnsplane/dnsplane/api/operator/v1"
	"github.com/dnsplane/dnsplane/internal/agentdial"
	"github.com/dnsplane/dnsplane/internal/registry/admissionregistration/validatingadmissionpolicy"
	"github.com/dnsplane/dnsplane/internal/registry/admissionregistration/validatingadmissionpolicybinding"
	"github.com/dnsplane/dnsplane/internal/registry/apps/daemonset"
	"github.com/dnsplane/dnsplane/internal/registry/apps/deployment"
	"github.com/dnsplane/dnsplane/internal/registry/apps/replicaset"
	"github.com/dnsplane/dnsplane/internal/registry/apps/statefulset"
	"github.com/dnsplane/dnsplane/internal/registry/autoscaling/horizontalpodautoscaler"
	"github.com/dnsplane/dnsplane/internal/registry/batch/cronjob"
	"github.com/dnsplane/dnsplane/internal/registry/batch/job"
	"github.com/dnsplane/dnsplane/internal/registry/certificates/certificatesigningrequest"
	"github.com/dnsplane/dnsplane/internal/registry/certificates/clustertrustbundle"
	"github.com/dnsplane/dnsplane/internal/registry/certificates/podcertificaterequest"
	"github.com/dnsplane/dnsplane/internal/registry/core/event"
	"github.com/dnsplane/dnsplane/internal/registry/core/namespace"
	"github.com/dnsplane/dnsplane/internal/registry/core/node"
	"github.com/dnsplane/dnsplane/internal/registry/core/persistentvolume"
	"github.com/dnsplane/dnsplane/internal/registry/core/persistentvolumeclaim"
	"github.com/dnsplane/dnsplane/internal/registry/core/pod"
	"github.com/dnsplane/dnsplane/internal/registry/core/podtemplate"
	"github.com/dnsplane/dnsplane/internal/registry/core/replicationcontroller"
	"github.com/dnsplane/dnsplane/internal/registry/core/secret"
	"github.com/dnsplane/dnsplane/internal/registry/core/service"
	"github.com/dnsplane/dnsplane/internal/registry/core/serviceaccount"
	"github.com/dnsplane/dnsplane/internal/registry/discovery/endpointslice"
	"github.com/dnsplane/dnsplane/internal/registry/operator/dns"
	"github.com/dnsplane/dnsplane/internal/registry/policy/poddisruptionbudget"
	"github.com/dnsplane/dnsplane/internal/registry/rbac/clusterrole"
	"github.com/dnsplane/dnsplane/internal/registry/rbac/clusterrolebinding"
	"github.com/dnsplane/dnsplane/internal/registry/rbac/role"
	"github.com/dnsplane/dnsplane/internal/registry/rbac/rolebinding"
	"github.com/dnsplane/dnsplane/internal/registry/resource/adminaccess"
	"github.com/dnsplane/dnsplane/internal/registry/resource/deviceclass"
	"github.com/dnsplane/dnsplane/internal/registry/resource/devicetaintrule"
	"github.com/dnsplane/dnsplane/internal/registry/resource/resourceclaim"
	"github.com/dnsplane/dnsplane/internal/registry/resource/resourceclaimtemplate"
	"github.com/dnsplane/dnsplane/internal/registry/resource/resourceslice"
	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/registry/scheduling/priorityclass"
	"github.com/dnsplane/dnsplane/internal/registry/storage/csidriver"
	"github.com/dnsplane/dnsplane/internal/registry/storage/csinode"
	"github.com/dnsplane/dnsplane/internal/registry/storage/csistoragecapacity"
	"github.com/dnsplane/dnsplane/internal/registry/storage/storageclass"
	"github.com/dnsplane/dnsplane/internal/registry/storage/volumeattachment"
	"github.com/dnsplane/dnsplane/internal/registry/storage/volumeattributesclass"
	"github.com/dnsplane/dnsplane/internal/registry/storagemigration/storageversionmigration"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
	"github.com/dnsplane/dnsplane/internal/validation"
)

// Config is what the strategies need from their host. The zero value
// serves offline validation: no cluster IPs.
type Config struct {
	// DNS are the pod DNS rules the feature gates enable.
	DNS validation.Options
	// ServiceIPs allocates Service cluster IPs; nil allocates none.
	ServiceIPs service.Allocator
	// ServiceNodePorts allocates Service node ports; nil allocates none.
	ServiceNodePorts service.NodePortAllocator
	// Logger reports what a strategy cannot return as an error.
	Logger *slog.Logger
	// ClusterDomain is the cluster DNS's cluster domain, which no DNS
	// forward plugin may take over; empty means cluster.local.
	ClusterDomain string
	// Namespaces reads namespaces for rules that depend on their labels
	// (DRA admin access); nil skips those rules.
	Namespaces adminaccess.NamespaceGetter
	// OwnDNSAddresses, when set, returns the addresses the cluster's DNS
	// serves on, which no DNS forwarder may name (a forwarding loop);
	// `dnsplane up` knows them.
	OwnDNSAddresses func() []netip.AddrPort
	// KubeletTLS is how pods/exec reaches node agents (pod.Agents); nil
	// answers 503.
	KubeletTLS *tls.Config
	// AgentDial says which agent endpoints pods/exec dials (pod.Agents.Dial);
	// nil = agentdial.Rules{}.
	AgentDial agentdial.Policy
	// ExecSessions counts exec sessions against the API server's
	// connection limit (pod.Agents.Sessions); nil = unlimited.
	ExecSessions pod.SessionLimiter
	// Now is the clock of the subresources' timestamps; nil = time.Now.
	Now func() time.Time
	// ServiceAccountTokens issues serviceaccounts/token; nil serves none.
	ServiceAccountTokens *serviceaccount.Tokens
	// Authorizer is the server's authorizer, which PodCertificateRequest's
	// strategy asks about signers; nil checks none, as for a server
	// without authorization.
	Authorizer authorizer.Authorizer
}

// Strategies returns the strategy of every kind api.Resources lists.
func Strategies(cfg Config) map[schema.GroupKind]rest.Strategy {
	coreKind := func(kind string) schema.GroupKind { return schema.GroupKind{Kind: kind} }
	apps := func(kind string) schema.GroupKind { return schema.GroupKind{Group: "apps", Kind: kind} }
	batch := func(kind string) schema.GroupKind { return schema.GroupKind{Group: "batch", Kind: kind} }
	gk := func(group, kind string) schema.GroupKind { return schema.GroupKind{Group: group, Kind: kind} }
	const certificates = "certificates.k8s.io"
	return map[schema.GroupKind]rest.Strategy{
		// Pod template carriers: upstream's rules with dnsplane's pod DNS
		// rules in place of upstream's (internal/registry/workload).
		coreKind("Pod"):                   pod.New(cfg.DNS).WithHost(pod.Agents{TLS: cfg.KubeletTLS, Logger: cfg.Logger, Dial: cfg.AgentDial, Sessions: cfg.ExecSessions}, cfg.Now),
		coreKind("PodTemplate"):           podtemplate.New(cfg.DNS),
		coreKind("ReplicationController"): replicationcontroller.New(cfg.DNS),
		apps("Deployment"):                deployment.New(cfg.DNS),
		apps("ReplicaSet"):                replicaset.New(cfg.DNS),
		apps("StatefulSet"):               statefulset.New(cfg.DNS),
		apps("DaemonSet"):                 daemonset.New(cfg.DNS),
		batch("Job"):                      job.New(cfg.DNS),
		batch("CronJob"):                  cronjob.New(cfg.DNS),

		coreKind("Namespace"): namespace.New(),
		coreKind("Service"):   service.New(cfg.ServiceIPs, cfg.ServiceNodePorts, cfg.Logger),
		coreKind("Node"):      node.New(),
		coreKind("Secret"):    secret.New(),

		// Kinds whose rules are upstream's validators alone, chosen as
		// upstream's pkg/registry/<group>/<kind>/strategy.go chooses them.
		coreKind("ConfigMap"): simple(core.ConfigMap{}, corevalidation.ValidateConfigMap, corevalidation.ValidateConfigMapUpdate),
		//nolint:staticcheck // SA1019: deprecated for EndpointSlice, but kube-apiserver still serves Endpoints, so dnsplane does too
		coreKind("Endpoints"):                              simple(core.Endpoints{}, corevalidation.ValidateEndpointsCreate, corevalidation.ValidateEndpointsUpdate),
		coreKind("Event"):                                  event.New(),
		coreKind("ServiceAccount"):                         serviceaccount.New(cfg.ServiceAccountTokens),
		coreKind("PersistentVolume"):                       persistentvolume.New(),
		coreKind("PersistentVolumeClaim"):                  persistentvolumeclaim.New(),
		coreKind("ResourceQuota"):                          returnsDeletedObject(withStatus(simple(core.ResourceQuota{}, corevalidation.ValidateResourceQuota, corevalidation.ValidateResourceQuotaUpdate), corevalidation.ValidateResourceQuotaStatusUpdate)),
		coreKind("LimitRange"):                             simple(core.LimitRange{}, corevalidation.ValidateLimitRange, validateLimitRangeUpdate),
		apps("ControllerRevision"):                         simple(appsinternal.ControllerRevision{}, appsvalidation.ValidateControllerRevisionCreate, appsvalidation.ValidateControllerRevisionUpdate),
		gk("policy", "PodDisruptionBudget"):                poddisruptionbudget.New(),
		gk("scheduling.k8s.io", "PriorityClass"):           priorityclass.New(),
		gk("autoscaling", "HorizontalPodAutoscaler"):       horizontalpodautoscaler.New(),
		gk("networking.k8s.io", "Ingress"):                 keepsGeneration(withStatus(simple(networking.Ingress{}, networkingvalidation.ValidateIngressCreate, networkingvalidation.ValidateIngressUpdate), networkingvalidation.ValidateIngressStatusUpdate)),
		gk("networking.k8s.io", "IngressClass"):            keepsGeneration(clusterScoped(simple(networking.IngressClass{}, networkingvalidation.ValidateIngressClass, networkingvalidation.ValidateIngressClassUpdate))),
		gk("networking.k8s.io", "NetworkPolicy"):           keepsGeneration(simple(networking.NetworkPolicy{}, validateNetworkPolicy, validateNetworkPolicyUpdate)),
		gk("networking.k8s.io", "ServiceCIDR"):             clusterScoped(withStatus(simple(networking.ServiceCIDR{}, networkingvalidation.ValidateServiceCIDR, networkingvalidation.ValidateServiceCIDRUpdate), networkingvalidation.ValidateServiceCIDRStatusUpdate)),
		gk("networking.k8s.io", "IPAddress"):               clusterScoped(simple(networking.IPAddress{}, networkingvalidation.ValidateIPAddress, validateIPAddressUpdate)),
		gk(certificates, "CertificateSigningRequest"):      certificatesigningrequest.New(),
		gk(certificates, "PodCertificateRequest"):          podcertificaterequest.New(clock.RealClock{}, cfg.Authorizer),
		gk(certificates, "ClusterTrustBundle"):             clustertrustbundle.New(),
		{Group: "discovery.k8s.io", Kind: "EndpointSlice"}: endpointslice.New(),
		{Group: "coordination.k8s.io", Kind: "Lease"}:      simple(coordination.Lease{}, coordinationvalidation.ValidateLease, coordinationvalidation.ValidateLeaseUpdate),
		storageKind("StorageClass"):                        storageclass.New(),
		storageKind("CSINode"):                             csinode.New(),
		storageKind("CSIDriver"):                           csidriver.New(),
		storageKind("CSIStorageCapacity"):                  csistoragecapacity.New(),
		storageKind("VolumeAttachment"):                    volumeattachment.New(),
		storageKind("VolumeAttributesClass"):               volumeattributesclass.New(),
		rbacKind("Role"):                                   role.New(),
		rbacKind("ClusterRole"):                            clusterrole.New(),
		rbacKind("RoleBinding"):                            rolebinding.New(),
		rbacKind("ClusterRoleBinding"):                     clusterrolebinding.New(),
		resourceKind("DeviceClass"):                        keepsGeneration(deviceclass.New()),
		resourceKind("ResourceClaim"):                      resourceclaim.New(cfg.Namespaces),
		resourceKind("ResourceClaimTemplate"):              resourceclaimtemplate.New(cfg.Namespaces),
		resourceKind("ResourceSlice"):                      keepsGeneration(resourceslice.New()),
		resourceKind("DeviceTaintRule"):                    devicetaintrule.New(),
		admissionKind("ValidatingAdmissionPolicy"):         keepsGeneration(validatingadmissionpolicy.New()),
		admissionKind("ValidatingAdmissionPolicyBinding"):  keepsGeneration(validatingadmissionpolicybinding.New()),
		storageMigrationKind("StorageVersionMigration"):    storageversionmigration.New(),
		{Group: "events.k8s.io", Kind: "Event"}:            notGarbageCollected(simple(core.Event{}, validateEventsV1, validateEventsV1Update)),

		// dnsplane's own API: the DNS operator's rules (internal/operator/dnsspec).
		{Group: dpoperatorv1.GroupName, Kind: "DNS"}: dnsStrategy(cfg),
	}
}

// dnsStrategy is the DNS resource's strategy: its rules with the
// cluster domain and the cluster DNS's own addresses of cfg.
func dnsStrategy(cfg Config) dns.Strategy {
	s := dns.New(cfg.ClusterDomain)
	s.OwnAddresses = cfg.OwnDNSAddresses
	return s
}

// simple is the strategy of a namespaced kind without a status subresource
// served with its k8s.io/api type, whose internal type is I.
func simple[I any](_ I, validate func(*I) field.ErrorList, validateUpdate func(*I, *I) field.ErrorList) upstream.Strategy[I] {
	return upstream.Strategy[I]{
		Default: rest.Default{Namespaced: true},
		Rules:   upstream.Rules[I]{Validate: validate, ValidateUpdate: validateUpdate},
	}
}

// validateEventsV1 and validateEventsV1Update are upstream's for Events
// written through events.k8s.io/v1: the legacy rules plus eventTime,
// series, type and the deprecated fields left unset.
func validateEventsV1(e *core.Event) field.ErrorList {
	return corevalidation.ValidateEventCreate(e, eventsv1.SchemeGroupVersion)
}

func validateEventsV1Update(e, old *core.Event) field.ErrorList {
	return corevalidation.ValidateEventUpdate(e, old, eventsv1.SchemeGroupVersion)
}
