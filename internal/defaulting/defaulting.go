// Package defaulting applies the API defaults that pod DNS validation relies
// on, as kube-apiserver does before it validates a decoded object.
package defaulting

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/dnsplane/dnsplane/api"
)

// DNSPolicy sets dnsPolicy "" to ClusterFirst in every pod spec obj carries,
// as upstream SetDefaults_PodSpec does: an empty policy never reaches
// validation through the v1 API.
func DNSPolicy(obj any) {
	for _, at := range api.PodSpecs(obj) {
		if at.Spec.DNSPolicy == "" {
			at.Spec.DNSPolicy = corev1.DNSClusterFirst
		}
	}
}
