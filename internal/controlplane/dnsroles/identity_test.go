package dnsroles_test

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	operatorv1 "github.com/dnsplane/dnsplane/api/operator/v1"
	"github.com/dnsplane/dnsplane/internal/controlplane"
	"github.com/dnsplane/dnsplane/internal/controlplane/controlplanetest"
	"github.com/dnsplane/dnsplane/internal/controlplane/dnsroles"
	"github.com/dnsplane/dnsplane/internal/controlplane/operatorrole"
	"github.com/dnsplane/dnsplane/internal/operator"
	"github.com/dnsplane/dnsplane/internal/operator/clusterdnspolicy"
	"github.com/dnsplane/dnsplane/internal/operator/render"
	"github.com/dnsplane/dnsplane/internal/testkit"
)

// acceptAll stands for the operator's dry-load child, which `up` runs
// from its own binary: the cluster DNS loads the Corefile itself here.
type acceptAll struct{}

func (acceptAll) Check(context.Context, []byte) error { return nil }

// TestClusterDNSRunsAsItsOwnUser: the cluster DNS of `up` reads the API as
// system:dnsplane:cluster-dns under Node,RBAC, and what clusterdnspolicy
// grants is what it needs: it answers a Service, a headless Service's
// endpoints by name, a namespace and an autopath query. The same credentials get 403
// for Secrets, pods, other ConfigMaps and every write. The data dir is
// one whose published Corefile names the admin kubeconfig (every data dir
// before this identity): the restart re-renders it. Before, the Corefile
// named the admin kubeconfig and the cluster DNS was cluster-admin.
func TestClusterDNSRunsAsItsOwnUser(t *testing.T) {
	t.Parallel()
	data := filepath.Join(t.TempDir(), "data")
	listen := net.JoinHostPort("127.0.73.1", strconv.Itoa(testkit.FreeUDPTCPPort(t, "127.0.73.1")))
	newRoles := func() (*dnsroles.Roles, render.Options) {
		r := dnsroles.New(dnsroles.Config{Listen: listen, ClusterDomain: "cluster.local", Upstreams: []string{"127.0.73.2:53"}})
		if err := r.ChooseAddresses(nil); err != nil {
			t.Fatal(err)
		}
		ro, err := r.RenderOptions()
		if err != nil {
			t.Fatal(err)
		}
		return r, ro
	}

	// The data dir as an earlier `up` left it.
	old := controlplanetest.StartTestServer(t, controlplane.Config{DataDir: data})
	_, ro := newRoles()
	ro.Kubeconfig = old.Kubeconfig
	stale, _, err := render.Corefile(&operatorv1.DNSSpec{}, ro)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := old.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: operator.Namespace}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: operator.Name, Namespace: operator.Namespace}, Data: map[string]string{"Corefile": string(stale)}}
	if _, err := old.Client.CoreV1().ConfigMaps(operator.Namespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := old.Stop(); err != nil {
		t.Fatal(err)
	}

	roles, ro := newRoles()
	op := operatorrole.New(operatorrole.Config{ServiceRange: "10.96.0.0/12", Render: ro, Checker: acceptAll{}, Instances: roles.ClusterDNS()})
	ts := controlplanetest.StartTestServer(t, controlplane.Config{DataDir: data, Roles: []controlplane.Role{op, roles}})
	admin := ts.Client

	kubeconfig := dnsroles.KubeconfigPath(data)
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatalf("the cluster DNS's kubeconfig: %v", err)
	}
	if cn, org := certSubject(t, cfg.CertData); cn != clusterdnspolicy.User || len(org) != 0 {
		t.Errorf("cluster DNS identity CN %q O %q, want %s and no group", cn, org, clusterdnspolicy.User)
	}
	// The operator publishes the Corefile again, naming those credentials.
	want := "kubeconfig " + kubeconfig + "\n"
	var corefile string
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		cm, err := admin.CoreV1().ConfigMaps(operator.Namespace).Get(ctx, operator.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		corefile = cm.Data["Corefile"]
		return strings.Contains(corefile, want), nil
	}); err != nil {
		t.Fatalf("the published Corefile does not name %q: %v\n%s", want, err, corefile)
	}
	if strings.Contains(corefile, ts.Kubeconfig) {
		t.Errorf("the published Corefile still names the admin kubeconfig %s:\n%s", ts.Kubeconfig, corefile)
	}
	// And the cluster DNS serves it (a graceful restart): until then the
	// stale Corefile answers, as the admin.
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return roles.ClusterDNS().Pods(operator.CorefileHash([]byte(corefile))).Updated == 1, nil
	}); err != nil {
		t.Fatalf("the cluster DNS does not serve the published Corefile: %v", err)
	}

	ns := "team"
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	web, err := admin.CoreV1().Services(ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CoreV1().Services(ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "db"},
		Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Ports: []corev1.ServicePort{{Port: 5432}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "db-1", Labels: map[string]string{discoveryv1.LabelServiceName: "db"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.244.0.5"}, Hostname: ptr.To("db-0"),
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		Ports: []discoveryv1.EndpointPort{{Port: ptr.To[int32](5432), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}
	if _, err := admin.DiscoveryV1().EndpointSlices(ns).Create(ctx, slice, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, want string }{
		{"web.team.svc.cluster.local.", web.Spec.ClusterIP},
		{"db.team.svc.cluster.local.", "10.244.0.5"},
		{"db-0.db.team.svc.cluster.local.", "10.244.0.5"},
		// A namespace's own name exists without records (NODATA) only
		// when the plugin's namespace informer has it: with a list that
		// is forbidden, the plugin logs an error every second and says
		// NXDOMAIN.
		{"team.svc.cluster.local.", "NOERROR"},
		// searchexpand: the derived search list of namespace team.
		{"web.search.team.cluster.local.ap.k8s.io.", web.Spec.ClusterIP},
	} {
		if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
			return lookupA(listen, tc.name) == tc.want, nil
		}); err != nil {
			t.Errorf("%s A @%s: %q, want %s", tc.name, listen, lookupA(listen, tc.name), tc.want)
		}
	}

	// Nothing more.
	dnsClient, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		what string
		call func(context.Context) error
	}{
		{"get a Secret", func(ctx context.Context) error {
			_, err := dnsClient.CoreV1().Secrets("kube-system").Get(ctx, "x", metav1.GetOptions{})
			return err
		}},
		{"list Secrets", func(ctx context.Context) error {
			_, err := dnsClient.CoreV1().Secrets("").List(ctx, metav1.ListOptions{})
			return err
		}},
		{"list pods", func(ctx context.Context) error {
			_, err := dnsClient.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
			return err
		}},
		{"list every ConfigMap of its namespace", func(ctx context.Context) error {
			_, err := dnsClient.CoreV1().ConfigMaps(operator.Namespace).List(ctx, metav1.ListOptions{})
			return err
		}},
		{"update its Corefile", func(ctx context.Context) error {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: operator.Name, Namespace: operator.Namespace}, Data: map[string]string{"Corefile": ".:53 {\n}\n"}}
			_, err := dnsClient.CoreV1().ConfigMaps(operator.Namespace).Update(ctx, cm, metav1.UpdateOptions{})
			return err
		}},
		{"create a Service", func(ctx context.Context) error {
			_, err := dnsClient.CoreV1().Services(ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "x"},
				Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{})
			return err
		}},
		{"delete an EndpointSlice", func(ctx context.Context) error {
			return dnsClient.DiscoveryV1().EndpointSlices(ns).Delete(ctx, "db-1", metav1.DeleteOptions{})
		}},
	} {
		if err := tc.call(ctx); !apierrors.IsForbidden(err) {
			t.Errorf("the cluster DNS may %s: %v, want 403", tc.what, err)
		}
	}
	if _, err := dnsClient.CoreV1().ConfigMaps(operator.Namespace).List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + operator.Name}); err != nil {
		t.Errorf("the cluster DNS may not list its ConfigMap: %v", err)
	}
}

// certSubject is the CN and O of the PEM client certificate data.
func certSubject(t *testing.T, data []byte) (string, []string) {
	t.Helper()
	block, _ := pem.Decode(data)
	if block == nil {
		t.Fatal("no client certificate")
	}
	leaf, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return leaf.Subject.CommonName, leaf.Subject.Organization
}

// lookupA is the last A record of name's answer at addr (after the CNAME
// of an autopath answer), else its rcode, or the error.
func lookupA(addr, name string) string {
	m := new(dns.Msg)
	m.SetQuestion(name, dns.TypeA)
	r, _, err := (&dns.Client{Timeout: 2 * time.Second}).Exchange(m, addr)
	if err != nil {
		return err.Error()
	}
	ip := dns.RcodeToString[r.Rcode]
	for _, rr := range r.Answer {
		if a, ok := rr.(*dns.A); ok {
			ip = a.A.String()
		}
	}
	return ip
}
