package apiserver

import (
	"context"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// The tests in this file check what kube-apiserver itself adds to objects
// that controllers rely on (docs/apiserver.md, "What the API server
// maintains"), through client-go as a controller sees it.

// TestPodAdmissionDefaults: pods get the not-ready and unreachable
// tolerations of upstream's DefaultTolerationSeconds plugin unless they
// tolerate those taints already, and the default service account, as
// kube-apiserver's default admission gives them; without the tolerations
// kube-controller-manager evicts a pod as soon as its node is NotReady.
func TestPodAdmissionDefaults(t *testing.T) {
	t.Parallel()
	ts := sharedServer(t)
	ctx := context.Background()
	ns := newNamespace(t, ts.client)
	notReady := corev1.Toleration{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)}
	unreachable := corev1.Toleration{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)}
	short := corev1.Toleration{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](10)}
	everything := corev1.Toleration{Operator: corev1.TolerationOpExists}
	other := corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "dns", Effect: corev1.TaintEffectNoSchedule}
	for _, tc := range []struct {
		name            string
		sa              string
		tolerations     []corev1.Toleration
		wantSA          string
		wantTolerations []corev1.Toleration
	}{
		{name: "none", wantSA: "default", wantTolerations: []corev1.Toleration{notReady, unreachable}},
		{name: "own", sa: "builder", tolerations: []corev1.Toleration{other}, wantSA: "builder", wantTolerations: []corev1.Toleration{other, notReady, unreachable}},
		{name: "not-ready-already", tolerations: []corev1.Toleration{short}, wantSA: "default", wantTolerations: []corev1.Toleration{short, unreachable}},
		{name: "tolerates-everything", tolerations: []corev1.Toleration{everything}, wantSA: "default", wantTolerations: []corev1.Toleration{everything}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: tc.name},
				Spec: corev1.PodSpec{ServiceAccountName: tc.sa, Tolerations: tc.tolerations,
					Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}},
			}
			for _, dryRun := range []bool{true, false} {
				opts := metav1.CreateOptions{}
				if dryRun {
					opts.DryRun = []string{metav1.DryRunAll}
				}
				got, err := ts.client.CoreV1().Pods(ns).Create(ctx, pod, opts)
				if err != nil {
					t.Fatal(err)
				}
				if got.Spec.ServiceAccountName != tc.wantSA || got.Spec.DeprecatedServiceAccount != tc.wantSA { //nolint:staticcheck // upstream keeps the alias in step
					t.Errorf("dry run %v: serviceAccountName %q, serviceAccount %q, want %q", dryRun, got.Spec.ServiceAccountName, got.Spec.DeprecatedServiceAccount, tc.wantSA) //nolint:staticcheck // as above
				}
				if !apiequality.Semantic.DeepEqual(got.Spec.Tolerations, tc.wantTolerations) {
					t.Errorf("dry run %v: tolerations %+v, want %+v", dryRun, got.Spec.Tolerations, tc.wantTolerations)
				}
				// Admission runs after the managed fields are recorded, as
				// in kube-apiserver: the client owns only what it sent.
				for _, mf := range got.ManagedFields {
					owned := mf.FieldsV1.GetRawString()
					if tc.sa == "" && strings.Contains(owned, `"f:serviceAccountName"`) || len(tc.tolerations) == 0 && strings.Contains(owned, `"f:tolerations"`) {
						t.Errorf("dry run %v: %s owns what admission added: %s", dryRun, mf.Manager, owned)
					}
				}
			}
		})
	}
}

// TestServiceIPFamilies: Services, headless ones included, get
// spec.ipFamilyPolicy and spec.ipFamilies as kube-apiserver gives them on a
// single-stack IPv4 cluster; the EndpointSlice controller needs them on
// headless Services to pick the address type of their slices.
func TestServiceIPFamilies(t *testing.T) {
	t.Parallel()
	ts := sharedServer(t)
	ctx := context.Background()
	ns := newNamespace(t, ts.client)
	v4, v6 := corev1.IPv4Protocol, corev1.IPv6Protocol
	single, require := corev1.IPFamilyPolicySingleStack, corev1.IPFamilyPolicyRequireDualStack
	selector := map[string]string{"app": "web"}
	for _, tc := range []struct {
		name         string
		clusterIP    string
		selector     map[string]string
		policy       *corev1.IPFamilyPolicy
		wantPolicy   corev1.IPFamilyPolicy
		wantFamilies []corev1.IPFamily
		wantErr      string
	}{
		{name: "headless", clusterIP: corev1.ClusterIPNone, selector: selector, wantPolicy: single, wantFamilies: []corev1.IPFamily{v4}},
		{name: "headless-selectorless", clusterIP: corev1.ClusterIPNone, wantPolicy: require, wantFamilies: []corev1.IPFamily{v4, v6}},
		{name: "headless-selectorless-single", clusterIP: corev1.ClusterIPNone, policy: &single, wantPolicy: single, wantFamilies: []corev1.IPFamily{v4}},
		{name: "cluster-ip", selector: selector, wantPolicy: single, wantFamilies: []corev1.IPFamily{v4}},
		{name: "require-dual", selector: selector, policy: &require,
			wantErr: `Service "require-dual" is invalid: spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc := &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: tc.name},
				Spec: corev1.ServiceSpec{ClusterIP: tc.clusterIP, Selector: tc.selector, IPFamilyPolicy: tc.policy,
					Ports: []corev1.ServicePort{{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP}}},
			}
			got, err := ts.client.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{})
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Spec.IPFamilyPolicy == nil || *got.Spec.IPFamilyPolicy != tc.wantPolicy || !slices.Equal(got.Spec.IPFamilies, tc.wantFamilies) {
				t.Errorf("ipFamilyPolicy %v, ipFamilies %v; want %s, %v", got.Spec.IPFamilyPolicy, got.Spec.IPFamilies, tc.wantPolicy, tc.wantFamilies)
			}
			// An update that sends neither keeps them, as upstream's
			// storage defaults them from the stored Service.
			got.Spec.IPFamilyPolicy, got.Spec.IPFamilies = nil, nil
			got.Labels = map[string]string{"touched": "yes"}
			upd, err := ts.client.CoreV1().Services(ns).Update(ctx, got, metav1.UpdateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if upd.Spec.IPFamilyPolicy == nil || *upd.Spec.IPFamilyPolicy != tc.wantPolicy || !slices.Equal(upd.Spec.IPFamilies, tc.wantFamilies) {
				t.Errorf("after update: ipFamilyPolicy %v, ipFamilies %v; want %s, %v", upd.Spec.IPFamilyPolicy, upd.Spec.IPFamilies, tc.wantPolicy, tc.wantFamilies)
			}
		})
	}
}

// TestGeneration: metadata.generation exists only on the kinds whose
// upstream strategy keeps one, and moves by each kind's own rule
// (pkg/registry/<group>/<kind>/strategy.go, PrepareForUpdate): a Deployment
// on an annotation change too, a ReplicaSet not; a PodTemplate on its
// template; an EndpointSlice on its endpoints or labels; a ConfigMap or
// Service never.
func TestGeneration(t *testing.T) {
	t.Parallel()
	ts := sharedServer(t)
	ctx := context.Background()
	ns := newNamespace(t, ts.client)
	c := ts.client
	labels := map[string]string{"app": "web"}
	template := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}}}
	type step struct {
		name string
		// change updates the object and returns its generation after.
		change func(t *testing.T) int64
		want   int64
	}
	check := func(t *testing.T, created int64, wantCreated int64, steps []step) {
		t.Helper()
		if created != wantCreated {
			t.Fatalf("generation on create %d, want %d", created, wantCreated)
		}
		for _, s := range steps {
			if got := s.change(t); got != s.want {
				t.Errorf("%s: generation %d, want %d", s.name, got, s.want)
			}
		}
	}
	must := func(t *testing.T, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}

	t.Run("Deployment", func(t *testing.T) {
		d, err := c.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web"},
			Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: template}}, metav1.CreateOptions{})
		must(t, err)
		update := func(mutate func(*appsv1.Deployment)) func(t *testing.T) int64 {
			t.Helper()
			return func(t *testing.T) int64 {
				t.Helper()
				mutate(d)
				d, err = c.AppsV1().Deployments(ns).Update(ctx, d, metav1.UpdateOptions{})
				must(t, err)
				return d.Generation
			}
		}
		check(t, d.Generation, 1, []step{
			{"annotation", update(func(d *appsv1.Deployment) { d.Annotations = map[string]string{"note": "a"} }), 2},
			{"label", update(func(d *appsv1.Deployment) { d.Labels = map[string]string{"tier": "x"} }), 2},
			{"replicas", update(func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To[int32](3) }), 3},
			{"status", func(t *testing.T) int64 {
				t.Helper()
				d.Status.ObservedGeneration = 3
				d, err = c.AppsV1().Deployments(ns).UpdateStatus(ctx, d, metav1.UpdateOptions{})
				must(t, err)
				return d.Generation
			}, 3},
		})
	})
	t.Run("ReplicaSet", func(t *testing.T) {
		rs, err := c.AppsV1().ReplicaSets(ns).Create(ctx, &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web"},
			Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: template}}, metav1.CreateOptions{})
		must(t, err)
		check(t, rs.Generation, 1, []step{{"annotation", func(t *testing.T) int64 {
			t.Helper()
			rs.Annotations = map[string]string{"note": "a"}
			rs, err = c.AppsV1().ReplicaSets(ns).Update(ctx, rs, metav1.UpdateOptions{})
			must(t, err)
			return rs.Generation
		}, 1}})
	})
	t.Run("PodTemplate", func(t *testing.T) {
		pt, err := c.CoreV1().PodTemplates(ns).Create(ctx, &corev1.PodTemplate{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Template: template}, metav1.CreateOptions{})
		must(t, err)
		check(t, pt.Generation, 1, []step{{"template", func(t *testing.T) int64 {
			t.Helper()
			pt.Template.Spec.Containers[0].Image = "registry.k8s.io/pause:3.9"
			pt, err = c.CoreV1().PodTemplates(ns).Update(ctx, pt, metav1.UpdateOptions{})
			must(t, err)
			return pt.Generation
		}, 2}})
	})
	t.Run("EndpointSlice", func(t *testing.T) {
		es, err := c.DiscoveryV1().EndpointSlices(ns).Create(ctx, &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "web-1"},
			AddressType: discoveryv1.AddressTypeIPv4, Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.244.0.5"}}}}, metav1.CreateOptions{})
		must(t, err)
		update := func(mutate func(*discoveryv1.EndpointSlice)) func(t *testing.T) int64 {
			t.Helper()
			return func(t *testing.T) int64 {
				t.Helper()
				mutate(es)
				es, err = c.DiscoveryV1().EndpointSlices(ns).Update(ctx, es, metav1.UpdateOptions{})
				must(t, err)
				return es.Generation
			}
		}
		check(t, es.Generation, 1, []step{
			{"label", update(func(es *discoveryv1.EndpointSlice) {
				es.Labels = map[string]string{discoveryv1.LabelServiceName: "web"}
			}), 2},
			{"endpoints", update(func(es *discoveryv1.EndpointSlice) { es.Endpoints[0].Addresses[0] = "10.244.0.6" }), 3},
			{"annotation", update(func(es *discoveryv1.EndpointSlice) { es.Annotations = map[string]string{"note": "a"} }), 3},
		})
	})
	t.Run("ConfigMap", func(t *testing.T) {
		cm, err := c.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Data: map[string]string{"a": "1"}}, metav1.CreateOptions{})
		must(t, err)
		check(t, cm.Generation, 0, []step{{"data", func(t *testing.T) int64 {
			t.Helper()
			cm.Data["a"] = "2"
			cm, err = c.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{})
			must(t, err)
			return cm.Generation
		}, 0}})
	})
	t.Run("Service", func(t *testing.T) {
		svc, err := c.CoreV1().Services(ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"},
			Spec: corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{{Port: 80, Protocol: corev1.ProtocolTCP}}}}, metav1.CreateOptions{})
		must(t, err)
		check(t, svc.Generation, 0, []step{{"ports", func(t *testing.T) int64 {
			t.Helper()
			svc.Spec.Ports[0].Port = 8080
			svc, err = c.CoreV1().Services(ns).Update(ctx, svc, metav1.UpdateOptions{})
			must(t, err)
			return svc.Generation
		}, 0}})
	})
}

// TestStatusKeepsWorkloadAnnotations: a /status write of a pod template
// carrier keeps the request's annotations and nothing else of its
// metadata or spec, as upstream's status strategies do. The deployment
// controller records deployment.kubernetes.io/revision that way, and
// kubectl rollout undo needs it.
func TestStatusKeepsWorkloadAnnotations(t *testing.T) {
	t.Parallel()
	ts := sharedServer(t)
	ctx := context.Background()
	ns := newNamespace(t, ts.client)
	c := ts.client
	labels := map[string]string{"app": "web"}
	d, err := c.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d.Annotations = map[string]string{"deployment.kubernetes.io/revision": "1"}
	d.Labels = map[string]string{"tier": "x"}
	d.Spec.Replicas = ptr.To[int32](7)
	d.Status.ObservedGeneration = 1
	got, err := c.AppsV1().Deployments(ns).UpdateStatus(ctx, d, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Annotations["deployment.kubernetes.io/revision"] != "1" {
		t.Errorf("annotations after /status: %v, want the revision kept", got.Annotations)
	}
	if len(got.Labels) != 0 || *got.Spec.Replicas != 1 || got.Generation != 1 || got.Status.ObservedGeneration != 1 {
		t.Errorf("/status changed labels %v, replicas %d or generation %d (observed %d)", got.Labels, *got.Spec.Replicas, got.Generation, got.Status.ObservedGeneration)
	}
}
