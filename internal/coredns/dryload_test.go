package coredns

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	operatorv1 "github.com/dnsplane/dnsplane/api/operator/v1"
	"github.com/dnsplane/dnsplane/internal/operator/render"
	"github.com/dnsplane/dnsplane/internal/testkit"
)

// TestDryLoad: a good Corefile loads without anything listening, and a
// bad one is refused with CoreDNS's reason.
func TestDryLoad(t *testing.T) {
	port := testkit.FreeUDPTCPPort(t, "127.0.0.1")
	// The operator's Corefile for a spec with every kind of forwarder,
	// rendered offline: the stand-ins for in-cluster credentials and
	// mounted CA bundles are what let it load here.
	spec := &operatorv1.DNSSpec{}
	if err := yaml.UnmarshalStrict([]byte(`
pluginConfig:
  forwardPlugins:
  - {domain: foo.com, nameServers: [192.0.2.1, "[2001:db8::1]:5353"], policy: RoundRobin}
  - {domain: bar.com, nameServers: [192.0.2.2], protocolStrategy: TCP}
  - {domain: tls.example, nameServers: [192.0.2.3], transportConfig: {transport: TLS, tls: {serverName: dns.example, caBundle: {name: ca}}}}
upstreamResolvers:
  upstreams: [{type: SystemResolvConf}, {type: Network, address: 192.0.2.53}]
cache: {positiveTTL: 900s}
logLevel: Trace
`), spec); err != nil {
		t.Fatal(err)
	}
	good, _, err := render.Corefile(spec, render.Options{
		Listen: fmt.Sprintf("127.0.0.1:%d", port), Offline: true,
		Health: "127.0.0.1:0", Ready: "127.0.0.1:0", Metrics: "127.0.0.1:0",
	})
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`), 0o600); err != nil {
		t.Fatal(err)
	}
	withKubeconfig, _, err := render.Corefile(spec, render.Options{Listen: "127.0.0.1:0", Kubeconfig: kubeconfig, Offline: true,
		Health: "127.0.0.1:0", Ready: "127.0.0.1:0", Metrics: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	const forward = ".:0 {\n    forward . 192.0.2.1\n}\n"
	tests := []struct {
		name, corefile, wantErr string
	}{
		{name: "operator Corefile", corefile: string(good)},
		{name: "operator Corefile with a kubeconfig", corefile: string(withKubeconfig)},
		{name: "unknown plugin", corefile: ".:0 {\n    nosuchplugin\n}\n", wantErr: "Unknown directive 'nosuchplugin'"},
		// The seed's sample writes the policy as a line of the server
		// block: CoreDNS has no plugin of that name.
		{name: "policy outside forward", corefile: "foo.com:0 {\n    forward . 1.2.3.4 5.6.7.8:5353\n    policy round_robin\n}\n", wantErr: "Unknown directive 'policy'"},
		{name: "16 upstreams", corefile: ".:0 {\n    forward . " + strings.Repeat("192.0.2.1 ", 15) + "192.0.2.2\n}\n", wantErr: "more than 15 TOs configured: 16"},
		{name: "unknown policy", corefile: ".:0 {\n    forward . 192.0.2.1 {\n        policy fastest\n    }\n}\n", wantErr: "unknown policy 'fastest'"},
		{name: "missing CA file", corefile: ".:0 {\n    forward . tls://192.0.2.1 {\n        tls /nonexistent/ca-bundle.crt\n    }\n}\n", wantErr: "/nonexistent/ca-bundle.crt"},
		{name: "missing kubeconfig", corefile: ".:0 {\n    kubernetes cluster.local {\n        kubeconfig /nonexistent/kubeconfig\n    }\n" + strings.TrimPrefix(forward, ".:0 {\n"), wantErr: "/nonexistent/kubeconfig"},
		{name: "syntax", corefile: ".:0 {\n    forward . 192.0.2.1 {\n", wantErr: "Corefile:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := DryLoad(context.Background(), tt.corefile)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("%v\n%s", err, tt.corefile)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !IsLoadError(err) {
				t.Fatalf("error %v, want a LoadError containing %q", err, tt.wantErr)
			}
		})
	}
	// Nothing was left listening on the good Corefile's port.
	if err := CanListen(fmt.Sprintf("127.0.0.1:%d", port)); err != nil {
		t.Errorf("port %d after the dry load: %v", port, err)
	}
}

// TestDryLoadRefusesWhileServing: a dry load would reset the readiness
// reporting of instances serving in the same process.
func TestDryLoadRefusesWhileServing(t *testing.T) {
	srv, err := Start(context.Background(), ".:0 {\n    bind 127.0.0.1\n    forward . 192.0.2.1\n}\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Stop() }()
	if err := DryLoad(context.Background(), ".:0 {\n    forward . 192.0.2.1\n}\n"); err == nil || IsLoadError(err) {
		t.Errorf("dry load while serving: %v, want a refusal", err)
	}
	_ = srv.Stop()
	if err := DryLoad(context.Background(), ".:0 {\n    forward . 192.0.2.1\n}\n"); err != nil {
		t.Errorf("dry load after the stop: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := DryLoad(ctx, ".:0 {\n    forward . 192.0.2.1\n}\n"); err == nil {
		t.Error("dry load with a cancelled context succeeded")
	}
}
