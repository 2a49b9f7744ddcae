package printers

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/dnsplane/dnsplane/api"
	dpappsv1 "github.com/dnsplane/dnsplane/api/apps/v1"
	dpbatchv1 "github.com/dnsplane/dnsplane/api/batch/v1"
	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
	dpoperatorv1 "github.com/dnsplane/dnsplane/api/operator/v1"
)

var tblNow = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func tblAgo(d time.Duration) metav1.Time { return metav1.NewTime(tblNow.Add(-d)) }

func tblAgoPtr(d time.Duration) *metav1.Time { t := tblAgo(d); return &t }

func tblMeta(name string, age time.Duration) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: "default", CreationTimestamp: tblAgo(age)}
}

func tblPtr[T any](v T) *T { return &v }

func tblResource(t *testing.T, group, plural string) api.Resource {
	t.Helper()
	for _, res := range api.Resources() {
		if res.GVK.Group == group && res.Plural == plural {
			return res
		}
	}
	t.Fatalf("no resource %s.%s", plural, group)
	return api.Resource{}
}

// tblCase is one object and the cells of its row.
type tblCase struct {
	name string
	obj  any
	want []any
}

// checkRows prints each case's object and compares the cells exactly.
func checkRows(t *testing.T, res api.Resource, cases []tblCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			table, err := Table(res, []any{tc.obj}, "None", metav1.ListMeta{}, tblNow)
			if err != nil {
				t.Fatal(err)
			}
			if len(table.Rows) != 1 {
				t.Fatalf("%d rows", len(table.Rows))
			}
			got := table.Rows[0].Cells
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("cells\n got %#v\nwant %#v", got, tc.want)
			}
			if len(got) != len(table.ColumnDefinitions) {
				t.Errorf("%d cells for %d columns", len(got), len(table.ColumnDefinitions))
			}
		})
	}
}

// TestTableColumns checks the headers kubectl prints for every resource
// (upper-cased column names; "+" marks the -o wide columns).
func TestTableColumns(t *testing.T) {
	want := map[string]string{
		"namespaces":             "NAME STATUS AGE",
		"pods":                   "NAME READY STATUS RESTARTS AGE +IP +NODE +NOMINATED_NODE +READINESS_GATES",
		"services":               "NAME TYPE CLUSTER-IP EXTERNAL-IP PORT(S) AGE +SELECTOR",
		"endpoints":              "NAME ENDPOINTS AGE",
		"configmaps":             "NAME DATA AGE",
		"secrets":                "NAME TYPE DATA AGE",
		"nodes":                  "NAME STATUS ROLES AGE VERSION +INTERNAL-IP +EXTERNAL-IP +OS-IMAGE +KERNEL-VERSION +CONTAINER-RUNTIME",
		"events":                 "LAST_SEEN TYPE REASON OBJECT +SUBOBJECT +SOURCE MESSAGE +FIRST_SEEN +COUNT +NAME",
		"podtemplates":           "NAME CONTAINERS IMAGES POD_LABELS",
		"replicationcontrollers": "NAME DESIRED CURRENT READY AGE +CONTAINERS +IMAGES +SELECTOR",
		"serviceaccounts":        "NAME SECRETS AGE",
		"deployments":            "NAME READY UP-TO-DATE AVAILABLE AGE +CONTAINERS +IMAGES +SELECTOR",
		"replicasets":            "NAME DESIRED CURRENT READY AGE +CONTAINERS +IMAGES +SELECTOR",
		"statefulsets":           "NAME READY AGE +CONTAINERS +IMAGES",
		"daemonsets":             "NAME DESIRED CURRENT READY UP-TO-DATE AVAILABLE NODE_SELECTOR AGE +CONTAINERS +IMAGES +SELECTOR",
		"jobs":                   "NAME STATUS COMPLETIONS DURATION AGE +CONTAINERS +IMAGES +SELECTOR",
		"cronjobs":               "NAME SCHEDULE TIMEZONE SUSPEND ACTIVE LAST_SCHEDULE AGE +CONTAINERS +IMAGES +SELECTOR",
		"endpointslices":         "NAME ADDRESSTYPE PORTS ENDPOINTS AGE",
		"leases":                 "NAME HOLDER AGE",
		"dnses":                  "NAME CLUSTER-IP CLUSTER-DOMAIN AVAILABLE AGE",

		// Kinds kube-controller-manager and kube-scheduler list (issue 19).
		"storageclasses":                    "NAME PROVISIONER RECLAIMPOLICY VOLUMEBINDINGMODE ALLOWVOLUMEEXPANSION AGE",
		"csinodes":                          "NAME DRIVERS AGE",
		"csidrivers":                        "NAME ATTACHREQUIRED PODINFOONMOUNT STORAGECAPACITY TOKENREQUESTS REQUIRESREPUBLISH MODES AGE",
		"csistoragecapacities":              "NAME STORAGECLASSNAME CAPACITY",
		"volumeattachments":                 "NAME ATTACHER PV NODE ATTACHED AGE",
		"volumeattributesclasses":           "NAME DRIVERNAME AGE",
		"roles":                             "NAME CREATED_AT",
		"clusterroles":                      "NAME CREATED_AT",
		"rolebindings":                      "NAME ROLE AGE +USERS +GROUPS +SERVICEACCOUNTS",
		"clusterrolebindings":               "NAME ROLE AGE +USERS +GROUPS +SERVICEACCOUNTS",
		"deviceclasses":                     "NAME AGE",
		"resourceclaims":                    "NAME STATE AGE",
		"resourceclaimtemplates":            "NAME AGE",
		"resourceslices":                    "NAME NODE DRIVER POOL AGE",
		"devicetaintrules":                  "NAME KEY VALUE EFFECT TIMEADDED AGE",
		"validatingadmissionpolicies":       "NAME VALIDATIONS PARAMKIND AGE",
		"validatingadmissionpolicybindings": "NAME POLICYNAME PARAMREF AGE",
		"storageversionmigrations":          "NAME RESOURCE STATUS",
	}
	for _, res := range api.Resources() {
		w, ok := want[res.Plural]
		if !ok {
			w, ok = controllerKindColumns[res.Plural]
		}
		if !ok {
			t.Errorf("no expectation for %s", res.Plural)
			continue
		}
		p := printerFor(res.GVK.GroupKind())
		var got []string
		for _, c := range p.Columns() {
			name := strings.ReplaceAll(strings.ToUpper(c.Name), " ", "_")
			if c.Priority == 1 {
				name = "+" + name
			}
			got = append(got, name)
			// "date" is the default table convertor's CREATED AT (roles).
			if c.Description == "" || (c.Type != "string" && c.Type != "integer" && c.Type != "boolean" && c.Type != "date") {
				t.Errorf("%s column %q: %+v", res.Plural, c.Name, c)
			}
			// Upstream formats a VolumeAttachment's ATTACHER as a name too,
			// and a StorageVersionMigration's NAME not.
			wantName := c.Name == "Name" && res.Plural != "storageversionmigrations" || res.Plural == "volumeattachments" && c.Name == "Attacher"
			if (c.Format == "name") != wantName {
				t.Errorf("%s column %q format %q", res.Plural, c.Name, c.Format)
			}
		}
		if g := strings.Join(got, " "); g != w {
			t.Errorf("%s columns\n got %s\nwant %s", res.Plural, g, w)
		}
	}
}

// TestEveryResourceHasPrinter: every served kind has a printer of its own,
// not the NAME/AGE default, and every printer prints a served kind.
func TestEveryResourceHasPrinter(t *testing.T) {
	served := map[schema.GroupKind]bool{}
	defaultColumns := defaultPrinter().Columns()
	for _, res := range api.Resources() {
		gk := res.GVK.GroupKind()
		served[gk] = true
		p, ok := For(gk)
		if !ok {
			t.Errorf("%v: no printer", gk)
			continue
		}
		// kube-apiserver's own printers of these two are NAME and AGE.
		nameAge := gk == schema.GroupKind{Group: "resource.k8s.io", Kind: "DeviceClass"} ||
			gk == schema.GroupKind{Group: "resource.k8s.io", Kind: "ResourceClaimTemplate"}
		if !nameAge && reflect.DeepEqual(p.Columns(), defaultColumns) {
			t.Errorf("%v: the printer has only the default columns", gk)
		}
	}
	for gk := range byKind() {
		if !served[gk] {
			t.Errorf("printer for %v, which api.Resources does not serve", gk)
		}
	}
}

// TestTableEveryResource prints an empty object of every resource: each row
// has one cell per column, of a JSON-friendly type.
func TestTableEveryResource(t *testing.T) {
	for _, res := range api.Resources() {
		obj := res.New()
		objectMeta(obj).Name = "x"
		table, err := Table(res, []any{obj}, "", metav1.ListMeta{}, tblNow)
		if err != nil {
			t.Errorf("%s: %v", res.Plural, err)
			continue
		}
		cells := table.Rows[0].Cells
		if len(cells) != len(table.ColumnDefinitions)+upstreamExtraCells[res.Plural] {
			t.Errorf("%s: %d cells, %d columns", res.Plural, len(cells), len(table.ColumnDefinitions))
		}
		for i, c := range cells {
			switch c.(type) {
			case string, int64, bool:
			default:
				t.Errorf("%s cell %d: %T", res.Plural, i, c)
			}
		}
		if _, err := json.Marshal(table); err != nil {
			t.Errorf("%s: %v", res.Plural, err)
		}
	}
	// A wrong Go type is an internal error, not a panic.
	_, err := Table(tblResource(t, "", "pods"), []any{&corev1.Service{}}, "", metav1.ListMeta{}, tblNow)
	if !apierrors.IsInternalError(err) {
		t.Errorf("wrong type: %v", err)
	}
}

func TestTablePods(t *testing.T) {
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: tblAgo(time.Hour)}}
	pod := func(name string, age time.Duration, spec corev1.PodSpec, status corev1.PodStatus) *dpcorev1.Pod {
		return &dpcorev1.Pod{ObjectMeta: tblMeta(name, age), Spec: dpcorev1.PodSpec{PodSpec: spec}, Status: status}
	}
	one := corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27"}}, NodeName: "node-1"}
	two := corev1.PodSpec{Containers: []corev1.Container{{Name: "app"}, {Name: "sidecar"}}}

	terminating := pod("web-old", 10*time.Minute, one, corev1.PodStatus{Phase: corev1.PodRunning,
		ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Ready: true, State: running}}})
	terminating.DeletionTimestamp = tblAgoPtr(time.Minute)
	lost := pod("web-lost", 10*time.Minute, one, corev1.PodStatus{Phase: corev1.PodRunning, Reason: "NodeLost"})
	lost.DeletionTimestamp = tblAgoPtr(time.Minute)
	succeededDeleted := pod("done-deleted", time.Hour, one, corev1.PodStatus{Phase: corev1.PodSucceeded})
	succeededDeleted.DeletionTimestamp = tblAgoPtr(time.Minute)

	checkRows(t, tblResource(t, "", "pods"), []tblCase{
		{"running", pod("web", 5*time.Minute, one, corev1.PodStatus{
			Phase: corev1.PodRunning, PodIP: "10.0.0.5", PodIPs: []corev1.PodIP{{IP: "10.0.0.5"}, {IP: "fd00::5"}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Ready: true, State: running}},
		}), []any{"web", "1/1", "Running", "0", "5m", "10.0.0.5", "node-1", "<none>", "<none>"}},
		{"pending unscheduled", pod("new", 30*time.Second, corev1.PodSpec{Containers: one.Containers}, corev1.PodStatus{Phase: corev1.PodPending}),
			[]any{"new", "0/1", "Pending", "0", "30s", "<none>", "<none>", "<none>", "<none>"}},
		{"crash loop with last restart", pod("crash", 2*time.Hour, two, corev1.PodStatus{
			Phase: corev1.PodRunning,
			ContainerStatuses: []corev1.ContainerStatus{
				{Name: "app", RestartCount: 3,
					State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
					LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", FinishedAt: tblAgo(2 * time.Minute)}}},
				{Name: "sidecar", Ready: true, State: running, RestartCount: 1},
			},
		}), []any{"crash", "1/2", "CrashLoopBackOff", "4 (2m ago)", "120m", "<none>", "<none>", "<none>", "<none>"}},
		{"terminated without reason", pod("oom", time.Hour, one, corev1.PodStatus{
			Phase: corev1.PodRunning,
			ContainerStatuses: []corev1.ContainerStatus{{Name: "app",
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Signal: 9}}}},
		}), []any{"oom", "0/1", "Signal:9", "0", "60m", "<none>", "node-1", "<none>", "<none>"}},
		{"waiting for init", pod("init", 3*time.Minute, corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "a"}, {Name: "b"}}, Containers: one.Containers,
		}, corev1.PodStatus{
			Phase: corev1.PodPending,
			InitContainerStatuses: []corev1.ContainerStatus{
				{Name: "a", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}}},
				{Name: "b", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}},
			},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "app", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}}},
		}), []any{"init", "0/1", "Init:1/2", "0", "3m", "<none>", "<none>", "<none>", "<none>"}},
		{"init failed", pod("init-err", 3*time.Minute, corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "a"}}, Containers: one.Containers,
		}, corev1.PodStatus{
			Phase: corev1.PodPending,
			InitContainerStatuses: []corev1.ContainerStatus{{Name: "a", RestartCount: 2,
				State:                corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 2}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 2, FinishedAt: tblAgo(40 * time.Second)}}}},
		}), []any{"init-err", "0/1", "Init:ExitCode:2", "2 (40s ago)", "3m", "<none>", "<none>", "<none>", "<none>"}},
		{"init crash loop", pod("init-crash", 3*time.Minute, corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "a"}}, Containers: one.Containers,
		}, corev1.PodStatus{
			Phase: corev1.PodPending,
			InitContainerStatuses: []corev1.ContainerStatus{{Name: "a",
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}},
		}), []any{"init-crash", "0/1", "Init:CrashLoopBackOff", "0", "3m", "<none>", "<none>", "<none>", "<none>"}},
		{"sidecar counted", pod("with-sidecar", 10*time.Minute, corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "proxy", RestartPolicy: tblPtr(corev1.ContainerRestartPolicyAlways)}},
			Containers:     one.Containers,
		}, corev1.PodStatus{
			Phase:      corev1.PodRunning,
			Conditions: []corev1.PodCondition{{Type: corev1.PodInitialized, Status: corev1.ConditionTrue}, {Type: corev1.PodReady, Status: corev1.ConditionTrue}},
			InitContainerStatuses: []corev1.ContainerStatus{{Name: "proxy", Ready: true, Started: tblPtr(true), State: running, RestartCount: 1,
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: tblAgo(5 * time.Minute)}}}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Ready: true, State: running}},
		}), []any{"with-sidecar", "2/2", "Running", "1 (5m ago)", "10m", "<none>", "<none>", "<none>", "<none>"}},
		{"completed next to running", pod("half", 10*time.Minute, two, corev1.PodStatus{
			Phase: corev1.PodRunning,
			ContainerStatuses: []corev1.ContainerStatus{
				{Name: "app", Ready: true, State: running},
				{Name: "sidecar", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed"}}},
			},
		}), []any{"half", "1/2", "NotReady", "0", "10m", "<none>", "<none>", "<none>", "<none>"}},
		{"terminating", terminating, []any{"web-old", "1/1", "Terminating", "0", "10m", "<none>", "node-1", "<none>", "<none>"}},
		{"node lost", lost, []any{"web-lost", "0/1", "Unknown", "0", "10m", "<none>", "node-1", "<none>", "<none>"}},
		{"deleted after success", succeededDeleted, []any{"done-deleted", "0/1", "Succeeded", "0", "60m", "<none>", "node-1", "<none>", "<none>"}},
		{"scheduling gated", pod("gated", time.Minute, corev1.PodSpec{Containers: one.Containers}, corev1.PodStatus{
			Phase:      corev1.PodPending,
			Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonSchedulingGated}},
		}), []any{"gated", "0/1", "SchedulingGated", "0", "60s", "<none>", "<none>", "<none>", "<none>"}},
		{"readiness gates and nomination", pod("gates", 25*time.Hour, corev1.PodSpec{
			Containers:     one.Containers,
			ReadinessGates: []corev1.PodReadinessGate{{ConditionType: "example.com/lb"}, {ConditionType: "example.com/dns"}},
		}, corev1.PodStatus{
			Phase: corev1.PodPending, NominatedNodeName: "node-2",
			Conditions: []corev1.PodCondition{{Type: "example.com/lb", Status: corev1.ConditionTrue}, {Type: "example.com/dns", Status: corev1.ConditionFalse}},
		}), []any{"gates", "0/1", "Pending", "0", "25h", "<none>", "<none>", "node-2", "1/2"}},
		{"evicted", pod("evicted", 3*24*time.Hour, one, corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted"}),
			[]any{"evicted", "0/1", "Evicted", "0", "3d", "<none>", "node-1", "<none>", "<none>"}},
	})

	// Finished pods carry the Completed row condition.
	res := tblResource(t, "", "pods")
	done := pod("done", time.Hour, one, corev1.PodStatus{Phase: corev1.PodSucceeded,
		ContainerStatuses: []corev1.ContainerStatus{{Name: "app", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed"}}}}})
	table, err := Table(res, []any{done}, "", metav1.ListMeta{}, tblNow)
	if err != nil {
		t.Fatal(err)
	}
	wantCond := []metav1.TableRowCondition{{Type: metav1.RowCompleted, Status: metav1.ConditionTrue, Reason: "Succeeded", Message: "The pod has completed successfully."}}
	if row := table.Rows[0]; row.Cells[2] != "Completed" || !reflect.DeepEqual(row.Conditions, wantCond) {
		t.Errorf("succeeded pod: %v %+v", row.Cells, row.Conditions)
	}
}

func TestTableServices(t *testing.T) {
	svc := func(name string, spec corev1.ServiceSpec, status corev1.ServiceStatus) *corev1.Service {
		return &corev1.Service{ObjectMeta: tblMeta(name, 3*24*time.Hour), Spec: spec, Status: status}
	}
	checkRows(t, tblResource(t, "", "services"), []tblCase{
		{"cluster IP", svc("kube-dns", corev1.ServiceSpec{
			Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.96.0.10", ClusterIPs: []string{"10.96.0.10", "fd00::a"},
			Ports:    []corev1.ServicePort{{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP}, {Name: "dns-tcp", Port: 53, Protocol: corev1.ProtocolTCP}},
			Selector: map[string]string{"k8s-app": "kube-dns"},
		}, corev1.ServiceStatus{}), []any{"kube-dns", "ClusterIP", "10.96.0.10", "<none>", "53/UDP,53/TCP", "3d", "k8s-app=kube-dns"}},
		{"node port and external IPs", svc("web", corev1.ServiceSpec{
			Type: corev1.ServiceTypeNodePort, ClusterIPs: []string{"10.96.12.7"}, ExternalIPs: []string{"198.51.100.7"},
			Ports:    []corev1.ServicePort{{Port: 80, NodePort: 30080, Protocol: corev1.ProtocolTCP}, {Port: 443, NodePort: 30443, Protocol: corev1.ProtocolTCP}},
			Selector: map[string]string{"app": "web", "tier": "front"},
		}, corev1.ServiceStatus{}), []any{"web", "NodePort", "10.96.12.7", "198.51.100.7", "80:30080/TCP,443:30443/TCP", "3d", "app=web,tier=front"}},
		{"load balancer pending", svc("lb", corev1.ServiceSpec{
			Type: corev1.ServiceTypeLoadBalancer, ClusterIPs: []string{"10.96.3.3"},
			Ports: []corev1.ServicePort{{Port: 443, NodePort: 31443, Protocol: corev1.ProtocolTCP}},
		}, corev1.ServiceStatus{}), []any{"lb", "LoadBalancer", "10.96.3.3", "<pending>", "443:31443/TCP", "3d", "<none>"}},
		{"load balancer ready", svc("lb2", corev1.ServiceSpec{
			Type: corev1.ServiceTypeLoadBalancer, ClusterIPs: []string{"10.96.3.4"}, ExternalIPs: []string{"198.51.100.1"},
			Ports: []corev1.ServicePort{{Port: 80, NodePort: 30001, Protocol: corev1.ProtocolTCP}},
		}, corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{
			{Hostname: "lb.example.com"}, {IP: "203.0.113.10"}, {IP: "203.0.113.10"},
		}}}), []any{"lb2", "LoadBalancer", "10.96.3.4", "203.0.113.10,lb.example.com,198.51.100.1", "80:30001/TCP", "3d", "<none>"}},
		{"external name", svc("db", corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "db.example.com"}, corev1.ServiceStatus{}),
			[]any{"db", "ExternalName", "<none>", "db.example.com", "<none>", "3d", "<none>"}},
		{"headless, type defaulted", svc("pg", corev1.ServiceSpec{ClusterIP: "None",
			Ports: []corev1.ServicePort{{Port: 5432}}, Selector: map[string]string{"app": "pg"},
		}, corev1.ServiceStatus{}), []any{"pg", "ClusterIP", "None", "<none>", "5432/TCP", "3d", "app=pg"}},
	})
}

// tblTemplate is a pod template with the given container images.
func tblTemplate(images ...string) dpcorev1.PodTemplateSpec {
	var cs []corev1.Container
	for _, image := range images {
		name, _, _ := strings.Cut(image, ":")
		cs = append(cs, corev1.Container{Name: name, Image: image})
	}
	return dpcorev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec:       dpcorev1.PodSpec{PodSpec: corev1.PodSpec{Containers: cs}},
	}
}

func TestTableDeployments(t *testing.T) {
	d := &dpappsv1.Deployment{ObjectMeta: tblMeta("web", 10*time.Minute)}
	d.Spec.Replicas = tblPtr(int32(3))
	d.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	d.Spec.Template = tblTemplate("nginx:1.27", "busybox:1.36")
	d.Status = appsv1.DeploymentStatus{Replicas: 3, UpdatedReplicas: 3, ReadyReplicas: 2, AvailableReplicas: 2}

	unset := &dpappsv1.Deployment{ObjectMeta: tblMeta("new", 20*time.Second)}
	unset.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "b"}}}}
	unset.Spec.Template = tblTemplate("nginx:1.27")

	checkRows(t, tblResource(t, "apps", "deployments"), []tblCase{
		{"rolling", d, []any{"web", "2/3", int64(3), int64(2), "10m", "nginx,busybox", "nginx:1.27,busybox:1.36", "app=web"}},
		{"replicas defaulted", unset, []any{"new", "0/1", int64(0), int64(0), "20s", "nginx", "nginx:1.27", "tier in (a,b)"}},
	})
}

func TestTableReplicaSets(t *testing.T) {
	rs := &dpappsv1.ReplicaSet{ObjectMeta: tblMeta("web-5d9f", 10*time.Minute)}
	rs.Spec.Replicas = tblPtr(int32(3))
	rs.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", "pod-template-hash": "5d9f"}}
	rs.Spec.Template = tblTemplate("nginx:1.27")
	rs.Status = appsv1.ReplicaSetStatus{Replicas: 3, ReadyReplicas: 2}
	checkRows(t, tblResource(t, "apps", "replicasets"), []tblCase{
		{"scaling", rs, []any{"web-5d9f", int64(3), int64(3), int64(2), "10m", "nginx", "nginx:1.27", "app=web,pod-template-hash=5d9f"}},
	})
}

func TestTableStatefulSets(t *testing.T) {
	s := &dpappsv1.StatefulSet{ObjectMeta: tblMeta("db", 25*time.Hour)}
	s.Spec.Replicas = tblPtr(int32(2))
	s.Spec.Template = tblTemplate("postgres:16")
	s.Status = appsv1.StatefulSetStatus{Replicas: 2, ReadyReplicas: 1}
	checkRows(t, tblResource(t, "apps", "statefulsets"), []tblCase{
		{"one ready", s, []any{"db", "1/2", "25h", "postgres", "postgres:16"}},
	})
}

func TestTableDaemonSets(t *testing.T) {
	ds := &dpappsv1.DaemonSet{ObjectMeta: tblMeta("node-cache", 3*24*time.Hour)}
	ds.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"k8s-app": "node-cache"}}
	ds.Spec.Template = tblTemplate("dnsplane:dev")
	ds.Spec.Template.Spec.NodeSelector = map[string]string{"kubernetes.io/os": "linux"}
	ds.Status = appsv1.DaemonSetStatus{DesiredNumberScheduled: 3, CurrentNumberScheduled: 3, NumberReady: 2, UpdatedNumberScheduled: 3, NumberAvailable: 2}
	plain := &dpappsv1.DaemonSet{ObjectMeta: tblMeta("plain", time.Hour)}
	checkRows(t, tblResource(t, "apps", "daemonsets"), []tblCase{
		{"rolling out", ds, []any{"node-cache", int64(3), int64(3), int64(2), int64(3), int64(2), "kubernetes.io/os=linux", "3d", "dnsplane", "dnsplane:dev", "k8s-app=node-cache"}},
		{"empty", plain, []any{"plain", int64(0), int64(0), int64(0), int64(0), int64(0), "<none>", "60m", "", "", "<none>"}},
	})
}

func TestTableJobs(t *testing.T) {
	complete := &dpbatchv1.Job{ObjectMeta: tblMeta("pi", 10*time.Minute)}
	complete.Spec.Completions = tblPtr(int32(1))
	complete.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"batch.kubernetes.io/controller-uid": "abc"}}
	complete.Spec.Template = tblTemplate("perl:5.34")
	complete.Status = batchv1.JobStatus{Succeeded: 1, StartTime: tblAgoPtr(10 * time.Minute), CompletionTime: tblAgoPtr(9*time.Minute + 30*time.Second),
		Conditions: []batchv1.JobCondition{{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue}, {Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}}

	parallel := &dpbatchv1.Job{ObjectMeta: tblMeta("work", 5*time.Minute)}
	parallel.Spec.Parallelism = tblPtr(int32(3))
	parallel.Status = batchv1.JobStatus{Succeeded: 0, Active: 3, StartTime: tblAgoPtr(5 * time.Minute)}

	failed := &dpbatchv1.Job{ObjectMeta: tblMeta("bad", time.Hour)}
	failed.Spec.Completions = tblPtr(int32(5))
	failed.Status = batchv1.JobStatus{Succeeded: 2, StartTime: tblAgoPtr(time.Hour), Conditions: []batchv1.JobCondition{
		{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue}, {Type: batchv1.JobFailed, Status: corev1.ConditionTrue}}}

	suspended := &dpbatchv1.Job{ObjectMeta: tblMeta("later", time.Minute)}
	suspended.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobSuspended, Status: corev1.ConditionTrue}}

	deleting := &dpbatchv1.Job{ObjectMeta: tblMeta("going", time.Minute)}
	deleting.DeletionTimestamp = tblAgoPtr(time.Second)

	checkRows(t, tblResource(t, "batch", "jobs"), []tblCase{
		{"complete", complete, []any{"pi", "Complete", "1/1", "30s", "10m", "perl", "perl:5.34", "batch.kubernetes.io/controller-uid=abc"}},
		{"parallel running", parallel, []any{"work", "Running", "0/1 of 3", "5m", "5m", "", "", "<none>"}},
		{"failed", failed, []any{"bad", "Failed", "2/5", "60m", "60m", "", "", "<none>"}},
		{"suspended", suspended, []any{"later", "Suspended", "0/1", "", "60s", "", "", "<none>"}},
		{"terminating", deleting, []any{"going", "Terminating", "0/1", "", "60s", "", "", "<none>"}},
	})
}

func TestTableCronJobs(t *testing.T) {
	cj := &dpbatchv1.CronJob{ObjectMeta: tblMeta("hello", 3*24*time.Hour)}
	cj.Spec.Schedule = "*/5 * * * *"
	cj.Spec.TimeZone = tblPtr("Etc/UTC")
	cj.Spec.Suspend = tblPtr(false)
	cj.Spec.JobTemplate.Spec.Template = tblTemplate("busybox:1.36")
	cj.Status = batchv1.CronJobStatus{Active: []corev1.ObjectReference{{Name: "hello-1"}}, LastScheduleTime: tblAgoPtr(2 * time.Minute)}

	bare := &dpbatchv1.CronJob{ObjectMeta: tblMeta("nightly", time.Hour)}
	bare.Spec.Schedule = "@daily"
	suspended := &dpbatchv1.CronJob{ObjectMeta: tblMeta("off", time.Hour)}
	suspended.Spec.Schedule = "0 3 * * *"
	suspended.Spec.Suspend = tblPtr(true)

	checkRows(t, tblResource(t, "batch", "cronjobs"), []tblCase{
		{"scheduled", cj, []any{"hello", "*/5 * * * *", "Etc/UTC", "False", int64(1), "2m", "3d", "busybox", "busybox:1.36", "<none>"}},
		{"never ran", bare, []any{"nightly", "@daily", "<none>", "<unset>", int64(0), "<none>", "60m", "", "", "<none>"}},
		{"suspended", suspended, []any{"off", "0 3 * * *", "<none>", "True", int64(0), "<none>", "60m", "", "", "<none>"}},
	})
}

func TestTableNodes(t *testing.T) {
	ready := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "cp-1", CreationTimestamp: tblAgo(10 * 24 * time.Hour), Labels: map[string]string{
			"node-role.kubernetes.io/control-plane": "", "node-role.kubernetes.io/etcd": "", "kubernetes.io/hostname": "cp-1",
		}},
		Spec: corev1.NodeSpec{Unschedulable: true},
		Status: corev1.NodeStatus{
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse}, {Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
			Addresses:  []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: "cp-1"}, {Type: corev1.NodeInternalIP, Address: "192.168.1.10"}, {Type: corev1.NodeExternalIP, Address: "203.0.113.5"}},
			NodeInfo:   corev1.NodeSystemInfo{KubeletVersion: "v1.32.0", OSImage: "Debian GNU/Linux 12 (bookworm)", KernelVersion: "6.1.0-18-amd64", ContainerRuntimeVersion: "containerd://1.7.13"},
		},
	}
	notReady := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "worker-1", CreationTimestamp: tblAgo(2 * time.Hour), Labels: map[string]string{"kubernetes.io/role": "worker"}},
		Status:     corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionUnknown}}},
	}
	fresh := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "worker-2", CreationTimestamp: tblAgo(time.Minute)}}
	checkRows(t, tblResource(t, "", "nodes"), []tblCase{
		{"cordoned control plane", ready, []any{"cp-1", "Ready,SchedulingDisabled", "control-plane,etcd", "10d", "v1.32.0",
			"192.168.1.10", "203.0.113.5", "Debian GNU/Linux 12 (bookworm)", "6.1.0-18-amd64", "containerd://1.7.13"}},
		{"not ready", notReady, []any{"worker-1", "NotReady", "worker", "120m", "", "<none>", "<none>", "<unknown>", "<unknown>", "<unknown>"}},
		{"no conditions", fresh, []any{"worker-2", "Unknown", "<none>", "60s", "", "<none>", "<none>", "<unknown>", "<unknown>", "<unknown>"}},
	})
}

func TestTableNamespaces(t *testing.T) {
	ns := func(name string, phase corev1.NamespacePhase) *corev1.Namespace {
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: tblAgo(48 * time.Hour)}, Status: corev1.NamespaceStatus{Phase: phase}}
	}
	checkRows(t, tblResource(t, "", "namespaces"), []tblCase{
		{"active", ns("default", corev1.NamespaceActive), []any{"default", "Active", "2d"}},
		{"phase unset", ns("new", ""), []any{"new", "Active", "2d"}},
		{"terminating", ns("old", corev1.NamespaceTerminating), []any{"old", "Terminating", "2d"}},
	})
}

func TestTableConfigMapsSecretsServiceAccounts(t *testing.T) {
	checkRows(t, tblResource(t, "", "configmaps"), []tblCase{
		{"data and binary data", &corev1.ConfigMap{ObjectMeta: tblMeta("dns-default", 5*time.Minute),
			Data: map[string]string{"Corefile": ".:53 {}", "extra": ""}, BinaryData: map[string][]byte{"blob": {1}}},
			[]any{"dns-default", int64(3), "5m"}},
		{"empty", &corev1.ConfigMap{ObjectMeta: tblMeta("empty", 5*time.Minute)}, []any{"empty", int64(0), "5m"}},
	})
	checkRows(t, tblResource(t, "", "secrets"), []tblCase{
		{"tls", &corev1.Secret{ObjectMeta: tblMeta("tls", 5*time.Minute), Type: corev1.SecretTypeTLS,
			Data: map[string][]byte{"tls.crt": nil, "tls.key": nil}}, []any{"tls", "kubernetes.io/tls", int64(2), "5m"}},
		{"type defaulted", &corev1.Secret{ObjectMeta: tblMeta("plain", 5*time.Minute), StringData: map[string]string{"a": "b"}},
			[]any{"plain", "Opaque", int64(0), "5m"}},
	})
	checkRows(t, tblResource(t, "", "serviceaccounts"), []tblCase{
		{"default", &corev1.ServiceAccount{ObjectMeta: tblMeta("default", 5*time.Minute)}, []any{"default", int64(0), "5m"}},
		{"with secret", &corev1.ServiceAccount{ObjectMeta: tblMeta("builder", 5*time.Minute), Secrets: []corev1.ObjectReference{{Name: "builder-token"}}},
			[]any{"builder", int64(1), "5m"}},
	})
}

func TestTableEvents(t *testing.T) {
	classic := &corev1.Event{
		ObjectMeta:     tblMeta("web-abc.17a2b", 10*time.Minute),
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "web-abc", FieldPath: "spec.containers{app}"},
		Reason:         "BackOff", Message: "Back-off restarting failed container app\n", Type: corev1.EventTypeWarning,
		Source:         corev1.EventSource{Component: "kubelet", Host: "node-1"},
		FirstTimestamp: tblAgo(10 * time.Minute), LastTimestamp: tblAgo(30 * time.Second), Count: 4,
	}
	series := &corev1.Event{
		ObjectMeta:     tblMeta("web-abc.17a2c", 5*time.Minute),
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "web-abc"},
		Reason:         "DNSConfigForming", Message: "Search Line limits were exceeded", Type: corev1.EventTypeNormal,
		EventTime:           metav1.NewMicroTime(tblNow.Add(-5 * time.Minute)),
		Series:              &corev1.EventSeries{Count: 7, LastObservedTime: metav1.NewMicroTime(tblNow.Add(-time.Minute))},
		ReportingController: "dnsplane-agent", ReportingInstance: "node-2",
	}
	single := &corev1.Event{
		ObjectMeta:     tblMeta("cluster.1", time.Minute),
		InvolvedObject: corev1.ObjectReference{Kind: "Node"},
		Reason:         "Starting", Type: corev1.EventTypeNormal,
		EventTime:           metav1.NewMicroTime(tblNow.Add(-time.Minute)),
		ReportingController: "dnsplane",
	}
	checkRows(t, tblResource(t, "", "events"), []tblCase{
		{"core event", classic, []any{"30s", "Warning", "BackOff", "pod/web-abc", "spec.containers{app}", "kubelet, node-1",
			"Back-off restarting failed container app", "10m", int64(4), "web-abc.17a2b"}},
		{"series", series, []any{"60s", "Normal", "DNSConfigForming", "pod/web-abc", "", "dnsplane-agent, node-2",
			"Search Line limits were exceeded", "5m", int64(7), "web-abc.17a2c"}},
		{"singleton", single, []any{"60s", "Normal", "Starting", "node", "", "dnsplane", "", "60s", int64(1), "cluster.1"}},
	})
}

// TestTableEventsV1: the events.k8s.io view prints as v1 Events do, its
// fields read through upstream's conversion (regarding as involvedObject,
// note as message, the deprecated* fields as the legacy ones).
func TestTableEventsV1(t *testing.T) {
	written := &eventsv1.Event{
		ObjectMeta: tblMeta("web-abc.17a2c", 5*time.Minute),
		Regarding:  corev1.ObjectReference{Kind: "Pod", Name: "web-abc", FieldPath: "spec.containers{app}"},
		Reason:     "DNSConfigForming", Note: "Search Line limits were exceeded\n", Type: corev1.EventTypeNormal, Action: "Forming",
		EventTime:           metav1.NewMicroTime(tblNow.Add(-5 * time.Minute)),
		Series:              &eventsv1.EventSeries{Count: 7, LastObservedTime: metav1.NewMicroTime(tblNow.Add(-time.Minute))},
		ReportingController: "dnsplane-agent", ReportingInstance: "node-2",
	}
	legacy := &eventsv1.Event{
		ObjectMeta: tblMeta("web-abc.17a2b", 10*time.Minute),
		Regarding:  corev1.ObjectReference{Kind: "Pod", Name: "web-abc"},
		Reason:     "BackOff", Note: "Back-off", Type: corev1.EventTypeWarning,
		DeprecatedSource:         corev1.EventSource{Component: "kubelet", Host: "node-1"},
		DeprecatedFirstTimestamp: tblAgo(10 * time.Minute), DeprecatedLastTimestamp: tblAgo(30 * time.Second), DeprecatedCount: 4,
	}
	checkRows(t, tblResource(t, "events.k8s.io", "events"), []tblCase{
		{"series", written, []any{"60s", "Normal", "DNSConfigForming", "pod/web-abc", "spec.containers{app}", "dnsplane-agent, node-2",
			"Search Line limits were exceeded", "5m", int64(7), "web-abc.17a2c"}},
		{"deprecated fields", legacy, []any{"30s", "Warning", "BackOff", "pod/web-abc", "", "kubelet, node-1",
			"Back-off", "10m", int64(4), "web-abc.17a2b"}},
	})
	core, err := Table(tblResource(t, "", "events"), nil, "", metav1.ListMeta{}, tblNow)
	if err != nil {
		t.Fatal(err)
	}
	v1, err := Table(tblResource(t, "events.k8s.io", "events"), nil, "", metav1.ListMeta{}, tblNow)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(core.ColumnDefinitions, v1.ColumnDefinitions) {
		t.Errorf("events.k8s.io columns %v, want v1's %v", v1.ColumnDefinitions, core.ColumnDefinitions)
	}
}

//nolint:staticcheck // the Endpoints kind is deprecated upstream but still served.
func TestTableEndpoints(t *testing.T) {
	eps := &corev1.Endpoints{ObjectMeta: tblMeta("kube-dns", time.Hour), Subsets: []corev1.EndpointSubset{{
		Addresses: []corev1.EndpointAddress{{IP: "10.0.0.1"}, {IP: "10.0.0.2"}},
		Ports:     []corev1.EndpointPort{{Name: "dns", Port: 53}, {Name: "metrics", Port: 9153}},
	}}}
	v6 := &corev1.Endpoints{ObjectMeta: tblMeta("v6", time.Hour), Subsets: []corev1.EndpointSubset{{
		Addresses: []corev1.EndpointAddress{{IP: "fd00::1"}}, Ports: []corev1.EndpointPort{{Port: 53}},
	}}}
	headless := &corev1.Endpoints{ObjectMeta: tblMeta("headless", time.Hour), Subsets: []corev1.EndpointSubset{{
		Addresses: []corev1.EndpointAddress{{IP: "10.0.0.7"}},
	}}}
	checkRows(t, tblResource(t, "", "endpoints"), []tblCase{
		{"more than three", eps, []any{"kube-dns", "10.0.0.1:53,10.0.0.2:53,10.0.0.1:9153 + 1 more...", "60m"}},
		{"IPv6", v6, []any{"v6", "[fd00::1]:53", "60m"}},
		{"no ports", headless, []any{"headless", "10.0.0.7", "60m"}},
		{"no subsets", &corev1.Endpoints{ObjectMeta: tblMeta("none", time.Hour)}, []any{"none", "<none>", "60m"}},
	})
}

func TestTableEndpointSlices(t *testing.T) {
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  tblMeta("kube-dns-x7k2p", time.Hour),
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: tblPtr("dns"), Port: tblPtr(int32(53))}, {Name: tblPtr("metrics")}, {}},
		Endpoints: []discoveryv1.Endpoint{
			{Addresses: []string{"10.0.0.1"}}, {Addresses: []string{"10.0.0.2"}}, {Addresses: []string{"10.0.0.3"}}, {Addresses: []string{"10.0.0.4"}},
		},
	}
	empty := &discoveryv1.EndpointSlice{ObjectMeta: tblMeta("empty", time.Hour), AddressType: discoveryv1.AddressTypeIPv6}
	checkRows(t, tblResource(t, "discovery.k8s.io", "endpointslices"), []tblCase{
		{"four endpoints", slice, []any{"kube-dns-x7k2p", "IPv4", "53,metrics,*", "10.0.0.1,10.0.0.2,10.0.0.3 + 1 more...", "60m"}},
		{"empty", empty, []any{"empty", "IPv6", "<unset>", "<unset>", "60m"}},
	})
}

func TestTableLeases(t *testing.T) {
	checkRows(t, tblResource(t, "coordination.k8s.io", "leases"), []tblCase{
		{"held", &coordinationv1.Lease{ObjectMeta: tblMeta("node-1", 40*time.Second), Spec: coordinationv1.LeaseSpec{HolderIdentity: tblPtr("node-1")}},
			[]any{"node-1", "node-1", "40s"}},
		{"free", &coordinationv1.Lease{ObjectMeta: tblMeta("operator", 40*time.Second)}, []any{"operator", "", "40s"}},
	})
}

func TestTablePodTemplatesAndReplicationControllers(t *testing.T) {
	tmpl := &dpcorev1.PodTemplate{ObjectMeta: tblMeta("tmpl", time.Hour), Template: tblTemplate("nginx:1.27", "busybox:1.36")}
	checkRows(t, tblResource(t, "", "podtemplates"), []tblCase{
		{"two containers", tmpl, []any{"tmpl", "nginx,busybox", "nginx:1.27,busybox:1.36", "app=web"}},
	})

	template := tblTemplate("nginx:1.27")
	rc := &dpcorev1.ReplicationController{ObjectMeta: tblMeta("rc", 5*time.Minute)}
	rc.Spec.Replicas = tblPtr(int32(2))
	rc.Spec.Selector = map[string]string{"app": "web"}
	rc.Spec.Template = &template
	rc.Status = corev1.ReplicationControllerStatus{Replicas: 2, ReadyReplicas: 1}
	bare := &dpcorev1.ReplicationController{ObjectMeta: tblMeta("bare", 5*time.Minute)}
	checkRows(t, tblResource(t, "", "replicationcontrollers"), []tblCase{
		{"running", rc, []any{"rc", int64(2), int64(2), int64(1), "5m", "nginx", "nginx:1.27", "app=web"}},
		{"no template", bare, []any{"bare", int64(1), int64(0), int64(0), "5m", "", "", "<none>"}},
	})
}

func TestTableDNS(t *testing.T) {
	ready := &dpoperatorv1.DNS{ObjectMeta: metav1.ObjectMeta{Name: "default", CreationTimestamp: tblAgo(2 * time.Hour)},
		Status: dpoperatorv1.DNSStatus{ClusterIP: "10.96.0.10", ClusterDomain: "cluster.local", Conditions: []metav1.Condition{
			{Type: "Degraded", Status: metav1.ConditionFalse}, {Type: "Available", Status: metav1.ConditionTrue},
		}}}
	failing := &dpoperatorv1.DNS{ObjectMeta: metav1.ObjectMeta{Name: "default", CreationTimestamp: tblAgo(2 * time.Hour)},
		Status: dpoperatorv1.DNSStatus{Conditions: []metav1.Condition{{Type: "Available", Status: metav1.ConditionFalse}}}}
	fresh := &dpoperatorv1.DNS{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	checkRows(t, tblResource(t, "operator.dnsplane.io", "dnses"), []tblCase{
		{"available", ready, []any{"default", "10.96.0.10", "cluster.local", "True", "120m"}},
		{"unavailable", failing, []any{"default", "<none>", "<none>", "False", "120m"}},
		{"no status", fresh, []any{"default", "<none>", "<none>", "Unknown", "<unknown>"}},
	})
}

func TestTableDefaultPrinter(t *testing.T) {
	res := api.Resource{GVK: schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, Plural: "widgets"}
	obj := &metav1.PartialObjectMetadata{ObjectMeta: tblMeta("w", 5*time.Minute)}
	table, err := Table(res, []any{obj}, "", metav1.ListMeta{}, tblNow)
	if err != nil {
		t.Fatal(err)
	}
	if len(table.ColumnDefinitions) != 2 || table.ColumnDefinitions[0].Name != "Name" || table.ColumnDefinitions[1].Name != "Age" {
		t.Errorf("columns %+v", table.ColumnDefinitions)
	}
	if !reflect.DeepEqual(table.Rows[0].Cells, []any{"w", "5m"}) {
		t.Errorf("cells %v", table.Rows[0].Cells)
	}
}

// TestTableIncludeObject checks row.object for each includeObject value and
// the table's metadata, through the JSON a client receives.
func TestTableIncludeObject(t *testing.T) {
	res := tblResource(t, "", "pods")
	pod := &dpcorev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "prod", UID: "u-1", ResourceVersion: "41",
			Labels: map[string]string{"app": "web"}, CreationTimestamp: tblAgo(time.Minute)},
		Spec: dpcorev1.PodSpec{PodSpec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}},
			DNSParams: &dpcorev1.PodDNSParams{Custom: &dpcorev1.PodDNSParamsCustom{Options: []string{"ndots:2"}}}},
	}
	withKind := &dpcorev1.Pod{TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Name: "typed"}}
	lm := metav1.ListMeta{ResourceVersion: "42", Continue: "token"}

	decode := func(t *testing.T, table *metav1.Table) (map[string]any, []map[string]any) {
		t.Helper()
		raw, err := json.Marshal(table)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		var objects []map[string]any
		for _, r := range doc["rows"].([]any) {
			o, _ := r.(map[string]any)["object"].(map[string]any)
			objects = append(objects, o)
		}
		return doc, objects
	}

	for _, mode := range []string{"", "Metadata", "Object", "None"} {
		t.Run(fmt.Sprintf("includeObject=%q", mode), func(t *testing.T) {
			table, err := Table(res, []any{pod, withKind}, mode, lm, tblNow)
			if err != nil {
				t.Fatal(err)
			}
			doc, objects := decode(t, table)
			if doc["kind"] != "Table" || doc["apiVersion"] != "meta.k8s.io/v1" {
				t.Errorf("type meta %v %v", doc["kind"], doc["apiVersion"])
			}
			md := doc["metadata"].(map[string]any)
			if md["resourceVersion"] != "42" || md["continue"] != "token" {
				t.Errorf("metadata %v", md)
			}
			if cols := doc["columnDefinitions"].([]any); len(cols) != 9 {
				t.Errorf("%d columns", len(cols))
			}
			o := objects[0]
			switch mode {
			case "None":
				if o != nil || objects[1] != nil {
					t.Errorf("object %v", o)
				}
			case "Object":
				if o["kind"] != "Pod" || o["apiVersion"] != "v1" || o["spec"] == nil {
					t.Errorf("object %v", o)
				}
				if dns := o["spec"].(map[string]any)["dnsParams"]; dns == nil {
					t.Errorf("spec lost dnsParams: %v", o["spec"])
				}
				if objects[1]["kind"] != "Pod" || objects[1]["apiVersion"] != "v1" {
					t.Errorf("typed object %v", objects[1])
				}
			default:
				m := o["metadata"].(map[string]any)
				if o["kind"] != "PartialObjectMetadata" || o["apiVersion"] != "meta.k8s.io/v1" || o["spec"] != nil ||
					m["name"] != "web" || m["namespace"] != "prod" || m["uid"] != "u-1" || m["resourceVersion"] != "41" {
					t.Errorf("object %v", o)
				}
			}
		})
	}

	t.Run("bad value", func(t *testing.T) {
		_, err := Table(res, []any{pod}, "Everything", lm, tblNow)
		if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), `unrecognized includeObject value: "Everything"`) {
			t.Errorf("err = %v", err)
		}
	})

	t.Run("empty list", func(t *testing.T) {
		table, err := Table(res, nil, "", lm, tblNow)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(table)
		if !strings.Contains(string(raw), `"rows":[]`) {
			t.Errorf("rows not an empty array: %s", raw)
		}
	})
}

func TestTableWithTypeMeta(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	tests := []struct{ in, want string }{
		{`{"metadata":{"name":"a"}}`, `{"kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":"a"}}`},
		{`{}`, `{"kind":"Deployment","apiVersion":"apps/v1"}`},
		{`{"kind":"Deployment","metadata":{}}`, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{}}`},
		{`{"apiVersion":"apps/v1","metadata":{}}`, `{"kind":"Deployment","apiVersion":"apps/v1","metadata":{}}`},
		{`{"kind":"Deployment","apiVersion":"apps/v1"}`, `{"kind":"Deployment","apiVersion":"apps/v1"}`},
	}
	for _, tc := range tests {
		if got := string(withTypeMeta([]byte(tc.in), gvk)); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.in, got, tc.want)
		}
	}
}
