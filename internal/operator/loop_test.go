package operator

import (
	"context"
	"log/slog"
	"net"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/dnsplane/dnsplane/api/client/clientset/versioned"
	operatorv1 "github.com/dnsplane/dnsplane/api/operator/v1"
	"github.com/dnsplane/dnsplane/internal/controlplane"
	"github.com/dnsplane/dnsplane/internal/controlplane/controlplanetest"
)

// TestControllerLeavesOutOwnAddress: a forward plugin naming the cluster
// DNS Service's own address (which an API server that does not know it
// accepts) is left out of the published Corefile, and Degraded names the
// nameserver and why, while the other forward plugins are published; the
// one over the cluster's reverse names is published with the kubernetes
// plugin in front and a Normal event saying so.
func TestControllerLeavesOutOwnAddress(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	ts := controlplanetest.StartTestServer(t, controlplane.Config{})
	dnsClient, err := versioned.NewForConfig(ts.ClientConfig)
	if err != nil {
		t.Fatal(err)
	}
	_, serviceRange, _ := net.ParseCIDR("10.96.0.0/12")
	c, err := NewController(Config{ServiceRange: serviceRange, Checker: &fakeChecker{}, Logger: slog.New(slog.DiscardHandler)}, ts.Client, dnsClient)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})

	if _, err := dnsClient.OperatorV1().DNSes().Create(ctx, &operatorv1.DNS{
		ObjectMeta: metav1.ObjectMeta{Name: operatorv1.DefaultName},
		Spec: operatorv1.DNSSpec{PluginConfig: operatorv1.PluginConfig{ForwardPlugins: []operatorv1.ForwardPlugin{
			{Domain: "self.test", NameServers: []string{"192.0.2.1", "10.96.0.10"}},
			{Domain: "ok.test", NameServers: []string{"192.0.2.2"}},
			{Domain: "10.in-addr.arpa", NameServers: []string{"192.0.2.3"}},
		}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	corefile := func() string {
		cm, err := ts.Client.CoreV1().ConfigMaps(Namespace).Get(ctx, Name, metav1.GetOptions{})
		if err != nil {
			return ""
		}
		return cm.Data[CorefileKey]
	}
	waitFor(t, "ok.test published", func() (bool, error) { return strings.Contains(corefile(), "ok.test:5353"), nil })
	if cf := corefile(); strings.Contains(cf, "self.test") || strings.Contains(cf, "10.96.0.10") {
		t.Errorf("the looping forwarder was published:\n%s", cf)
	}
	const want = `spec.pluginConfig.forwardPlugins[0].nameServers[1]: Invalid value: "10.96.0.10": must not be 10.96.0.10:53, an address this cluster's DNS serves on`
	waitFor(t, "Degraded InvalidSpec naming the nameserver", func() (bool, error) {
		d, err := dnsClient.OperatorV1().DNSes().Get(ctx, operatorv1.DefaultName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		cond := meta.FindStatusCondition(d.Status.Conditions, operatorv1.DNSDegraded)
		return cond != nil && cond.Status == metav1.ConditionTrue && cond.Reason == "InvalidSpec" && strings.Contains(cond.Message, want), nil
	})
	if cf := corefile(); !strings.Contains(cf, "kubernetes cluster.local 10.in-addr.arpa {") {
		t.Errorf("10.in-addr.arpa is forwarded without the cluster's PTR names:\n%s", cf)
	}
	waitFor(t, "the ReverseZoneShared event", func() (bool, error) {
		list, err := ts.Client.CoreV1().Events("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, e := range list.Items {
			if e.Reason == EventReverseZoneShared && e.Type == "Normal" &&
				e.Message == "forward plugin 10.in-addr.arpa: the cluster DNS answers the PTR names of Service and pod IPs in 10.in-addr.arpa itself and forwards the other names" {
				return true, nil
			}
		}
		return false, nil
	})
}
