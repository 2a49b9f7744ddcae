package controlplane_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/dnsplane/dnsplane/internal/controlplane"
	"github.com/dnsplane/dnsplane/internal/controlplane/controlplanetest"
	"github.com/dnsplane/dnsplane/internal/storage"
	"github.com/dnsplane/dnsplane/internal/testkit"
)

// TestKubernetesServiceEndpoints: two API servers on one etcd both appear
// in the kubernetes Service's Endpoints and EndpointSlice, by their
// advertise addresses, as kube-apiserver's lease reconciler keeps them; one
// that stops leaves at once.
func TestKubernetesServiceEndpoints(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	emb, err := storage.StartEmbedded(ctx, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = emb.Close() })
	// Both reach the one etcd as external etcd, with its client certificate.
	cc := emb.ClientConfig()
	etcdConfig := func(advertise string) controlplane.Config {
		return controlplane.Config{EtcdServers: cc.Endpoints, EtcdCAFile: cc.CAFile, EtcdCertFile: cc.CertFile, EtcdKeyFile: cc.KeyFile,
			AdvertiseAddress: advertise}
	}
	// TEST-NET-1 addresses: endpoints may not name loopback ones.
	a := controlplanetest.StartTestServer(t, etcdConfig("192.0.2.10"))
	b := controlplanetest.StartTestServer(t, etcdConfig("192.0.2.11"))

	waitFor(ctx, t, a.Client, []string{"192.0.2.10", "192.0.2.11"})
	if err := b.Stop(); err != nil {
		t.Fatal(err)
	}
	waitFor(ctx, t, a.Client, []string{"192.0.2.10"})
}

// waitFor polls until default/kubernetes's Endpoints and EndpointSlice
// both name exactly want, on the https port.
func waitFor(ctx context.Context, t *testing.T, c kubernetes.Interface, want []string) {
	t.Helper()
	err := testkit.Until(ctx, 50*time.Millisecond, 30*time.Second, func(ctx context.Context) (bool, error) {
		ep, err := c.CoreV1().Endpoints(metav1.NamespaceDefault).Get(ctx, "kubernetes", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		es, err := c.DiscoveryV1().EndpointSlices(metav1.NamespaceDefault).Get(ctx, "kubernetes", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		eps, slice := endpointsIPs(ep), sliceIPs(es)
		if !slices.Equal(eps, want) || !slices.Equal(slice, want) {
			return false, fmt.Errorf("endpoints %v, endpoint slice %v", eps, slice)
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("kubernetes endpoints and endpoint slice, want %v: %v", want, err)
	}
}

func endpointsIPs(ep *corev1.Endpoints) []string { //nolint:staticcheck // SA1019: kube-apiserver still keeps the kubernetes Service's Endpoints, and so does dnsplane
	var out []string
	for _, s := range ep.Subsets {
		if len(s.Ports) != 1 || s.Ports[0].Name != "https" || s.Ports[0].Protocol != corev1.ProtocolTCP {
			return nil
		}
		for _, a := range s.Addresses {
			out = append(out, a.IP)
		}
	}
	slices.Sort(out)
	return out
}

func sliceIPs(es *discoveryv1.EndpointSlice) []string {
	if es.AddressType != discoveryv1.AddressTypeIPv4 || len(es.Ports) != 1 || es.Ports[0].Name == nil || *es.Ports[0].Name != "https" ||
		es.Labels[discoveryv1.LabelServiceName] != "kubernetes" {
		return nil
	}
	var out []string
	for _, e := range es.Endpoints {
		out = append(out, e.Addresses...)
	}
	slices.Sort(out)
	return out
}
