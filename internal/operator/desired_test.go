package operator

import (
	"net"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	operatorv1 "github.com/dnsplane/dnsplane/api/operator/v1"
	"github.com/dnsplane/dnsplane/internal/operator/clusterdnspolicy"
	"github.com/dnsplane/dnsplane/internal/operator/operatorpolicy"
	"github.com/dnsplane/dnsplane/internal/operator/render"
)

func TestServiceIP(t *testing.T) {
	tests := []struct {
		cidr, want, err string
	}{
		{"10.96.0.0/12", "10.96.0.10", ""},
		{"10.0.0.0/24", "10.0.0.10", ""},
		{"10.0.0.128/25", "10.0.0.138", ""},
		{"192.168.0.0/28", "192.168.0.10", ""},
		{"fd00::/108", "fd00::a", ""},
		{"10.0.0.0/29", "", "too small"},
	}
	for _, tt := range tests {
		t.Run(tt.cidr, func(t *testing.T) {
			_, n, err := net.ParseCIDR(tt.cidr)
			if err != nil {
				t.Fatal(err)
			}
			ip, err := ServiceIP(n)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || ip.String() != tt.want {
				t.Fatalf("ServiceIP = %v, %v; want %s", ip, err, tt.want)
			}
		})
	}
}

func TestCorefileHash(t *testing.T) {
	a, b := CorefileHash([]byte(".:53 {\n}\n")), CorefileHash([]byte(".:54 {\n}\n"))
	if a == b || len(a) != 16 || a != CorefileHash([]byte(".:53 {\n}\n")) {
		t.Fatalf("hashes %q %q: want distinct, stable, 16 hex digits", a, b)
	}
}

func TestDesiredObjects(t *testing.T) {
	svc := desiredService("10.96.0.10")
	if svc.Spec.ClusterIP != "10.96.0.10" || len(svc.Spec.Ports) != 3 {
		t.Fatalf("service %+v", svc.Spec)
	}
	ports := map[string]string{}
	for _, p := range svc.Spec.Ports {
		ports[p.Name] = string(p.Protocol) + "/" + p.TargetPort.String()
	}
	if ports["dns"] != "UDP/5353" || ports["dns-tcp"] != "TCP/5353" || ports["metrics"] != "TCP/9153" {
		t.Fatalf("ports %v", ports)
	}
	ds := desiredDaemonSet("img", "abc")
	if got := ds.Spec.Template.Annotations[CorefileHashAnnotation]; got != "abc" {
		t.Fatalf("hash annotation %q", got)
	}
	if cm := desiredConfigMap([]byte("x"), nil); cm.Data[CorefileKey] != "x" || cm.Namespace != Namespace || cm.Name != Name {
		t.Fatalf("configmap %+v", cm)
	}
}

func TestDaemonSetChanged(t *testing.T) {
	base := func() *appsv1.DaemonSet { return desiredDaemonSet("img", "h1") }
	tests := []struct {
		name   string
		mutate func(*appsv1.DaemonSet)
		want   bool
	}{
		{"same", func(*appsv1.DaemonSet) {}, false},
		{"server defaults", func(d *appsv1.DaemonSet) {
			d.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways
			d.Spec.RevisionHistoryLimit = new(int32)
			d.Labels["extra"] = "kept"
		}, false},
		{"corefile hash", func(d *appsv1.DaemonSet) { d.Spec.Template.Annotations[CorefileHashAnnotation] = "h2" }, true},
		{"image", func(d *appsv1.DaemonSet) { d.Spec.Template.Spec.Containers[0].Image = "other" }, true},
		{"args", func(d *appsv1.DaemonSet) { d.Spec.Template.Spec.Containers[0].Args = nil }, true},
		// A DaemonSet made before the pods had their own account runs as
		// "default", which may list nothing.
		{"service account", func(d *appsv1.DaemonSet) { d.Spec.Template.Spec.ServiceAccountName = "default" }, true},
		{"label removed", func(d *appsv1.DaemonSet) { delete(d.Spec.Template.Labels, OwnerLabel) }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cur := base()
			tt.mutate(cur)
			if got := daemonSetChanged(cur, base()); got != tt.want {
				t.Fatalf("changed = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestDesiredStatus(t *testing.T) {
	now := metav1.Unix(1000, 0)
	earlier := metav1.Unix(10, 0)
	svc := desiredService("10.96.0.10")
	noIP := desiredService("")
	skipped := []render.Skipped{{Path: "spec.pluginConfig.forwardPlugins[1]",
		Errors: field.ErrorList{field.Invalid(field.NewPath("spec", "pluginConfig", "forwardPlugins").Index(1).Child("domain"), "cluster.local", "bad")}}}
	type conds struct{ available, progressing, degraded, degradedReason string }
	tests := []struct {
		name     string
		o        observed
		prev     []metav1.Condition
		want     conds
		wantMsg  string // in Degraded's message
		keepTime bool   // Available keeps its earlier lastTransitionTime
	}{
		{"healthy", observed{service: svc, pods: &Pods{3, 3, 3}}, nil,
			conds{"True", "False", "False", "AsExpected"}, "", false},
		{"no service", observed{pods: &Pods{3, 3, 3}}, nil,
			conds{"False", "True", "False", "AsExpected"}, "", false},
		{"service without IP", observed{service: noIP, pods: &Pods{3, 3, 3}}, nil,
			conds{"False", "True", "False", "AsExpected"}, "", false},
		{"no daemonset", observed{service: svc}, nil,
			conds{"False", "True", "False", "AsExpected"}, "", false},
		{"rolling: degraded suppressed", observed{service: svc, pods: &Pods{10, 5, 7}}, nil,
			conds{"True", "True", "False", "AsExpected"}, "", false},
		{"too many unavailable", observed{service: svc, pods: &Pods{10, 10, 7}}, nil,
			conds{"True", "False", "True", "DegradedConditions"}, "Too many DNS pods are unavailable (3 > 1 max unavailable).", false},
		{"no pods available", observed{service: svc, pods: &Pods{2, 2, 0}}, nil,
			conds{"False", "False", "True", "DegradedConditions"}, "No DNS pods are available.", false},
		{"no pods desired", observed{service: svc, pods: &Pods{0, 0, 0}}, nil,
			conds{"False", "False", "True", "DegradedConditions"}, "No DNS pods are available.", false},
		{"skipped forwarder, even while rolling", observed{service: svc, pods: &Pods{3, 1, 3}, skipped: skipped}, nil,
			conds{"True", "True", "True", "InvalidSpec"}, "spec.pluginConfig.forwardPlugins[1] left out", false},
		{"rejected corefile", observed{service: svc, pods: &Pods{3, 3, 3}, rejected: "Corefile:3 - Error"}, nil,
			conds{"True", "False", "True", "CorefileRejected"}, "the last good one is served: Corefile:3 - Error", false},
		{"dry load gave no verdict", observed{service: svc, pods: &Pods{3, 3, 3}, dryLoadFailed: "the dry load did not run: signal: killed"}, nil,
			conds{"True", "False", "True", "DryLoadFailed"}, "it could not be checked: the dry load did not run: signal: killed; retrying with backoff. This is no verdict on the Corefile.", false},
		{"corefile too large", observed{service: svc, pods: &Pods{3, 3, 3}, tooLarge: "ConfigMap dnsplane-system/dns-default would hold 2000000 bytes"}, nil,
			conds{"True", "False", "True", "CorefileTooLarge"}, "was not published (the last published one, if any, is served): ConfigMap dnsplane-system/dns-default would hold 2000000 bytes.", false},
		{"transition time kept", observed{service: svc, pods: &Pods{1, 1, 1}},
			[]metav1.Condition{{Type: "Available", Status: "True", LastTransitionTime: earlier}},
			conds{"True", "False", "False", "AsExpected"}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dns := &operatorv1.DNS{ObjectMeta: metav1.ObjectMeta{Name: "default", Generation: 4}}
			dns.Status.Conditions = tt.prev
			st, _ := desiredStatus(dns, "cluster.local", tt.o, now)
			get := func(typ string) metav1.Condition {
				for _, c := range st.Conditions {
					if c.Type == typ {
						return c
					}
				}
				t.Fatalf("no %s condition in %+v", typ, st.Conditions)
				return metav1.Condition{}
			}
			a, p, d := get("Available"), get("Progressing"), get("Degraded")
			got := conds{string(a.Status), string(p.Status), string(d.Status), d.Reason}
			if got != tt.want {
				t.Fatalf("conditions %+v, want %+v\n%+v", got, tt.want, st.Conditions)
			}
			if tt.wantMsg != "" && !strings.Contains(d.Message, tt.wantMsg) {
				t.Errorf("Degraded message %q, want %q in it", d.Message, tt.wantMsg)
			}
			if tt.keepTime != a.LastTransitionTime.Equal(&earlier) {
				t.Errorf("Available lastTransitionTime %v (kept: want %v)", a.LastTransitionTime, tt.keepTime)
			}
			if st.ObservedGeneration != 4 || st.ClusterDomain != "cluster.local" {
				t.Errorf("status %+v", st)
			}
			if tt.o.service == svc && st.ClusterIP != "10.96.0.10" {
				t.Errorf("clusterIP %q", st.ClusterIP)
			}
			again, _ := desiredStatus(&operatorv1.DNS{ObjectMeta: dns.ObjectMeta, Status: st}, "cluster.local", tt.o, metav1.Unix(2000, 0))
			if !statusEqual(st, again) {
				t.Errorf("recomputing an unchanged status differs: a resync would write")
			}
		})
	}
}

// TestDesiredStatusAntiFlap: Progressing, and Degraded for rollout states,
// do not turn True again within flapTolerance of turning False; the
// status is due again when the tolerance ends. Spec problems are not held
// back.
func TestDesiredStatusAntiFlap(t *testing.T) {
	now := metav1.Unix(1000, 0)
	svc := desiredService("10.96.0.10")
	falseAt := func(typ string, ago time.Duration) metav1.Condition {
		return metav1.Condition{Type: typ, Status: metav1.ConditionFalse, Reason: "AsExpected", LastTransitionTime: metav1.NewTime(now.Add(-ago))}
	}
	for _, tt := range []struct {
		name        string
		o           observed
		prev        metav1.Condition
		typ         string
		wantStatus  metav1.ConditionStatus
		wantRecheck time.Duration
	}{
		{"progressing held back", observed{service: svc, pods: &Pods{3, 1, 3}}, falseAt("Progressing", 10*time.Second),
			"Progressing", metav1.ConditionFalse, 30 * time.Second},
		{"progressing after the tolerance", observed{service: svc, pods: &Pods{3, 1, 3}}, falseAt("Progressing", 41*time.Second),
			"Progressing", metav1.ConditionTrue, 0},
		{"degraded rollout held back", observed{service: svc, pods: &Pods{10, 10, 7}}, falseAt("Degraded", 5*time.Second),
			"Degraded", metav1.ConditionFalse, 35 * time.Second},
		{"degraded spec problem at once", observed{service: svc, pods: &Pods{3, 3, 3}, rejected: "Corefile:3 - Error"}, falseAt("Degraded", 5*time.Second),
			"Degraded", metav1.ConditionTrue, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dns := &operatorv1.DNS{ObjectMeta: metav1.ObjectMeta{Name: "default", Generation: 2}}
			dns.Status.Conditions = []metav1.Condition{tt.prev}
			st, recheck := desiredStatus(dns, "cluster.local", tt.o, now)
			var got *metav1.Condition
			for i := range st.Conditions {
				if st.Conditions[i].Type == tt.typ {
					got = &st.Conditions[i]
				}
			}
			if got == nil || got.Status != tt.wantStatus || recheck != tt.wantRecheck {
				t.Fatalf("%s = %+v, recheck %v; want %s, recheck %v", tt.typ, got, recheck, tt.wantStatus, tt.wantRecheck)
			}
			if got.ObservedGeneration != 2 {
				t.Errorf("observedGeneration %d, want 2", got.ObservedGeneration)
			}
		})
	}
}

// TestPolicyNamespace: the operator's roles are in the namespace it
// writes to.
func TestPolicyNamespace(t *testing.T) {
	t.Parallel()
	if operatorpolicy.Namespace != Namespace || operatorpolicy.User == "" {
		t.Errorf("operatorpolicy.Namespace %q, operator.Namespace %q", operatorpolicy.Namespace, Namespace)
	}
	// The cluster DNS may read the ConfigMap the operator publishes.
	if clusterdnspolicy.Namespace != Namespace || clusterdnspolicy.ConfigMap != Name {
		t.Errorf("clusterdnspolicy's ConfigMap %s/%s, the operator's %s/%s", clusterdnspolicy.Namespace, clusterdnspolicy.ConfigMap, Namespace, Name)
	}
}
