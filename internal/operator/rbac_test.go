package operator

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"

	"github.com/dnsplane/dnsplane/api/client/clientset/versioned"
	operatorv1 "github.com/dnsplane/dnsplane/api/operator/v1"
	"github.com/dnsplane/dnsplane/internal/controlplane"
	"github.com/dnsplane/dnsplane/internal/controlplane/controlplanetest"
)

// forbiddenRecorder records every request the API server refused with a
// 403, whichever client made it (informers, reconciler, event sink).
type forbiddenRecorder struct {
	mu   sync.Mutex
	seen []string
	rt   http.RoundTripper
}

func (f *forbiddenRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := f.rt.RoundTrip(req)
	if err == nil && resp.StatusCode == http.StatusForbidden {
		f.mu.Lock()
		f.seen = append(f.seen, req.Method+" "+req.URL.Path)
		f.mu.Unlock()
	}
	return resp, err
}

func (f *forbiddenRecorder) refused() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.seen...)
}

// TestOperatorRBACSuffices runs the operator against dnsplane's API
// server (kube's RBAC authorizer) as a service account bound to exactly
// ClusterRoleRules, RoleRules and EventRoleRules, as the chart binds
// them, and requires it to reconcile the DNS to Available and record its
// events without a single request refused.
func TestOperatorRBACSuffices(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	t.Parallel()
	ts := controlplanetest.StartTestServer(t, controlplane.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin := ts.Client

	// What the chart installs before the operator runs: its namespace,
	// and the roles bound to its service account.
	const sa = "dnsplane-operator"
	user := "system:serviceaccount:" + Namespace + ":" + sa
	subject := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: Namespace}}
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// dnsplane's API server makes the namespace a system namespace; the
	// chart creates it on a stock cluster.
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	name := "dnsplane-operator-test"
	must(admin.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: ClusterRoleRules()}, metav1.CreateOptions{}))
	must(admin.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}, Subjects: subject,
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}}, metav1.CreateOptions{}))
	for ns, rules := range map[string][]rbacv1.PolicyRule{Namespace: RoleRules(), EventNamespace: EventRoleRules()} {
		must(admin.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{}))
		must(admin.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}, Subjects: subject,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name}}, metav1.CreateOptions{}))
	}

	// The operator's client: the service account, through impersonation
	// by the admin (RBAC authorizes the impersonated user).
	forbidden := &forbiddenRecorder{}
	cfg := rest.CopyConfig(ts.ClientConfig)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + Namespace, "system:authenticated"}}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { forbidden.rt = rt; return forbidden })
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dnsClient, err := versioned.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The rules must not pass because of something else: a user with no
	// binding is refused the same calls.
	if _, err := kube.CoreV1().Secrets(Namespace).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("listing secrets as %s: %v, want forbidden", user, err)
	}
	forbidden.mu.Lock()
	forbidden.seen = nil
	forbidden.mu.Unlock()

	_, serviceRange, _ := net.ParseCIDR("10.96.0.0/12")
	c, err := NewController(Config{ServiceRange: serviceRange, Checker: &fakeChecker{}, ScrapePods: true,
		HealthInterval: 50 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)}, kube, dnsClient)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- c.Run(runCtx) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})

	adminDNS, err := versioned.NewForConfig(ts.ClientConfig)
	if err != nil {
		t.Fatal(err)
	}
	// available reports the DNS's Available condition once its status
	// describes the current spec, after reporting the DaemonSet's pods
	// available as the daemon set controller would (nothing runs them
	// here).
	available := func() (bool, error) {
		dss := admin.AppsV1().DaemonSets(Namespace)
		ds, err := dss.Get(ctx, Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if ds.Status.ObservedGeneration != ds.Generation || ds.Status.NumberAvailable != 1 {
			ds.Status.DesiredNumberScheduled, ds.Status.UpdatedNumberScheduled, ds.Status.NumberAvailable = 1, 1, 1
			ds.Status.ObservedGeneration = ds.Generation
			if _, err := dss.UpdateStatus(ctx, ds, metav1.UpdateOptions{}); err != nil {
				return false, err
			}
		}
		d, err := adminDNS.OperatorV1().DNSes().Get(ctx, operatorv1.DefaultName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return d.Status.ObservedGeneration == d.Generation && meta.IsStatusConditionTrue(d.Status.Conditions, operatorv1.DNSAvailable), nil
	}
	// The operator creates the DNS "default" and its objects.
	waitFor(t, "DNS default Available", available)
	waitFor(t, "the DNS object's events", func() (bool, error) {
		evs, err := admin.CoreV1().Events(EventNamespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, e := range evs.Items {
			if e.InvolvedObject.Kind == "DNS" && e.Source.Component == EventComponent {
				return true, nil
			}
		}
		return false, fmt.Errorf("%d events, none from %s", len(evs.Items), EventComponent)
	})

	// A spec change: the ConfigMap and the DaemonSet are updated and the
	// status written again.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		d, err := adminDNS.OperatorV1().DNSes().Get(ctx, operatorv1.DefaultName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		d.Spec.PluginConfig.ForwardPlugins = []operatorv1.ForwardPlugin{{Domain: "corp.example", NameServers: []string{"192.0.2.1"}}}
		_, err = adminDNS.OperatorV1().DNSes().Update(ctx, d, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the forward plugin published", func() (bool, error) {
		cm, err := admin.CoreV1().ConfigMaps(Namespace).Get(ctx, Name, metav1.GetOptions{})
		return err == nil && strings.Contains(cm.Data[CorefileKey], "corp.example:5353"), err
	})
	waitFor(t, "Available after the change", available)
	if refused := forbidden.refused(); len(refused) > 0 {
		t.Errorf("the API server refused the operator %d requests: %v", len(refused), refused)
	}
}
