package validation

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dpappsv1 "github.com/dnsplane/dnsplane/api/apps/v1"
	dpbatchv1 "github.com/dnsplane/dnsplane/api/batch/v1"
	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
)

// carrier builds one kind of object around a pod spec; root is where the
// kind keeps it, the prefix every expected error path starts with.
type carrier struct {
	kind  string
	root  string
	build func(meta metav1.ObjectMeta, spec dpcorev1.PodSpec) any
}

func tmpl(spec dpcorev1.PodSpec) dpcorev1.PodTemplateSpec {
	return dpcorev1.PodTemplateSpec{Spec: spec}
}

var carriers = []carrier{
	{"Pod", "spec", func(m metav1.ObjectMeta, s dpcorev1.PodSpec) any {
		return &dpcorev1.Pod{ObjectMeta: m, Spec: s}
	}},
	{"PodTemplate", "template.spec", func(m metav1.ObjectMeta, s dpcorev1.PodSpec) any {
		return &dpcorev1.PodTemplate{ObjectMeta: m, Template: tmpl(s)}
	}},
	{"ReplicationController", "spec.template.spec", func(m metav1.ObjectMeta, s dpcorev1.PodSpec) any {
		t := tmpl(s)
		return &dpcorev1.ReplicationController{ObjectMeta: m, Spec: dpcorev1.ReplicationControllerSpec{Template: &t}}
	}},
	{"Deployment", "spec.template.spec", func(m metav1.ObjectMeta, s dpcorev1.PodSpec) any {
		return &dpappsv1.Deployment{ObjectMeta: m, Spec: dpappsv1.DeploymentSpec{Template: tmpl(s)}}
	}},
	{"ReplicaSet", "spec.template.spec", func(m metav1.ObjectMeta, s dpcorev1.PodSpec) any {
		return &dpappsv1.ReplicaSet{ObjectMeta: m, Spec: dpappsv1.ReplicaSetSpec{Template: tmpl(s)}}
	}},
	{"StatefulSet", "spec.template.spec", func(m metav1.ObjectMeta, s dpcorev1.PodSpec) any {
		return &dpappsv1.StatefulSet{ObjectMeta: m, Spec: dpappsv1.StatefulSetSpec{Template: tmpl(s)}}
	}},
	{"DaemonSet", "spec.template.spec", func(m metav1.ObjectMeta, s dpcorev1.PodSpec) any {
		return &dpappsv1.DaemonSet{ObjectMeta: m, Spec: dpappsv1.DaemonSetSpec{Template: tmpl(s)}}
	}},
	{"Job", "spec.template.spec", func(m metav1.ObjectMeta, s dpcorev1.PodSpec) any {
		return &dpbatchv1.Job{ObjectMeta: m, Spec: dpbatchv1.JobSpec{Template: tmpl(s)}}
	}},
	{"CronJob", "spec.jobTemplate.spec.template.spec", func(m metav1.ObjectMeta, s dpcorev1.PodSpec) any {
		return &dpbatchv1.CronJob{ObjectMeta: m, Spec: dpbatchv1.CronJobSpec{JobTemplate: dpbatchv1.JobTemplateSpec{Spec: dpbatchv1.JobSpec{Template: tmpl(s)}}}}
	}},
}

// seedPod is the pod of KEP-4427's examples: policy None, nameserver
// 1.2.3.4, the given searches.
func seedPod(search ...string) dpcorev1.PodSpec {
	var s dpcorev1.PodSpec
	s.DNSPolicy = corev1.DNSNone
	s.DNSConfig = &corev1.PodDNSConfig{Nameservers: []string{"1.2.3.4"}, Searches: append([]string(nil), search...)}
	return s
}

// write is one API request in a sequence: the object with these searches
// and label, validated with the KEP-4427 gate as given against the object
// stored so far. want holds errors relative to the carrier's pod spec.
type write struct {
	gate   bool
	label  string
	search []string
	want   []string
}

// runWrites plays a create followed by updates through ValidateObjectDNS.
// Only accepted writes are stored, as in an API server.
func runWrites(t *testing.T, c carrier, writes []write) {
	t.Helper()
	var stored any
	for i, w := range writes {
		opts := strictOpts
		opts.RelaxedDNSSearchValidation = w.gate
		obj := c.build(metav1.ObjectMeta{Name: "dns-example", Labels: map[string]string{"step": w.label}}, seedPod(w.search...))
		var want []string
		for _, e := range w.want {
			want = append(want, c.root+"."+e)
		}
		got := ValidateObjectDNS(obj, stored, opts)
		t.Run(fmt.Sprintf("write %d gate=%v search=%q", i, w.gate, w.search), func(t *testing.T) {
			expectErrs(t, got, want...)
		})
		if len(got) == 0 {
			stored = obj
		}
	}
}

const (
	underscore = "_sip._tcp.abc_d.example.com"
	plain      = "example.com"
)

var (
	underscoreErr = `dnsConfig.searches[0]: Invalid value: "_sip._tcp.abc_d.example.com": ` + strictMsg
	dotErr        = `dnsConfig.searches[0]: Invalid value: "": ` + strictMsg
)

// TestUpstreamIntegration runs the relaxed DNS cases of upstream's pod
// integration test (k/k test/integration/pods/pods_test.go; #33-#36) on a Pod.
func TestUpstreamIntegration(t *testing.T) {
	t.Parallel()
	pod := carriers[0]
	tests := map[string][]write{
		"#33 underscore on, then off and a label change": {
			{gate: true, label: "a", search: []string{underscore}},
			{gate: false, label: "b", search: []string{underscore}},
		},
		"#34 dot on, then off and a label change": {
			{gate: true, label: "a", search: []string{"."}},
			{gate: false, label: "b", search: []string{"."}},
		},
		"#35 underscore with the gate off": {{gate: false, search: []string{underscore}, want: []string{underscoreErr}}},
		"#35 dot with the gate off":        {{gate: false, search: []string{"."}, want: []string{dotErr}}},
		"#36 plain, gate on then off": {
			{gate: true, label: "a", search: []string{plain}},
			{gate: false, label: "b", search: []string{plain}},
		},
		"#36 plain, gate off": {{gate: false, search: []string{plain}}},
	}
	for name, writes := range tests {
		t.Run(name, func(t *testing.T) { runWrites(t, pod, writes) })
	}
}

// TestKEP4427MotivationExamples: both pods of KEP-4427's Motivation are rejected on
// create with the gate off (with the KEP's messages, in today's wording) and
// accepted with it on.
func TestKEP4427MotivationExamples(t *testing.T) {
	t.Parallel()
	examples := []struct {
		search []string
		err    string
	}{
		{[]string{"abc_d.example.com"}, `spec.dnsConfig.searches[0]: Invalid value: "abc_d.example.com": ` + strictMsg},
		{[]string{".", "default.svc.cluster.local", "svc.cluster.local", "cluster.local"}, `spec.dnsConfig.searches[0]: Invalid value: "": ` + strictMsg},
	}
	for _, ex := range examples {
		pod := &dpcorev1.Pod{Spec: seedPod(ex.search...)}
		expectErrs(t, ValidateObjectDNS(pod, nil, strictOpts), ex.err)
		expectErrs(t, ValidateObjectDNS(pod, nil, allOn))
	}
}

// TestKEP4427IntegrationPlan plays the KEP's integration test plan (gate on
// or off × new or existing value × underscore, dot or plain, and the
// ratcheting sequence) for every kind that carries a pod spec; the KEP asks
// for Pod, Deployment, ReplicaSet and Job.
func TestKEP4427IntegrationPlan(t *testing.T) {
	t.Parallel()
	legacy := map[string]struct {
		search []string
		err    string
	}{
		"underscore": {[]string{underscore, plain}, underscoreErr},
		"dot":        {[]string{".", plain}, dotErr},
	}
	for _, c := range carriers {
		t.Run(c.kind, func(t *testing.T) {
			t.Parallel()
			for name, v := range legacy {
				plan := map[string][]write{
					"gate on, new " + name:      {{gate: true, search: v.search}},
					"gate on, existing " + name: {{gate: true, label: "a", search: v.search}, {gate: true, label: "b", search: v.search}},
					"gate off, new " + name:     {{gate: false, search: v.search, want: []string{v.err}}},
					"gate off, existing " + name: {
						{gate: true, label: "a", search: v.search},
						{gate: false, label: "b", search: v.search},
					},
					"gate off, existing " + name + ", another legacy value added": {
						{gate: true, label: "a", search: v.search},
						{gate: false, label: "b", search: append([]string{"_more.example"}, v.search...)},
					},
					"ratcheting " + name: {
						{gate: true, label: "a", search: v.search},                         // gate on: write the legacy value
						{gate: false, label: "b", search: v.search},                        // gate off: unrelated change passes
						{gate: false, label: "b", search: []string{plain}},                 // remove the legacy value
						{gate: false, label: "c", search: v.search, want: []string{v.err}}, // adding it back is refused
					},
				}
				for pname, writes := range plan {
					t.Run(pname, func(t *testing.T) { runWrites(t, c, writes) })
				}
			}
			plainPlan := map[string][]write{
				"gate on, new plain":       {{gate: true, search: []string{plain}}},
				"gate on, existing plain":  {{gate: true, label: "a", search: []string{plain}}, {gate: true, label: "b", search: []string{plain}}},
				"gate off, new plain":      {{gate: false, search: []string{plain}}},
				"gate off, existing plain": {{gate: false, label: "a", search: []string{plain}}, {gate: false, label: "b", search: []string{plain}}},
			}
			for pname, writes := range plainPlan {
				t.Run(pname, func(t *testing.T) { runWrites(t, c, writes) })
			}
		})
	}
}

// TestObjectPaths: errors are rooted at the object, and everything in a
// nested pod spec is checked, not only the searches.
func TestObjectPaths(t *testing.T) {
	t.Parallel()
	spec := func() dpcorev1.PodSpec {
		s := withCustom(dpcorev1.DNSCustom, []string{"$(HOST)", "x"}, "ndots:16")
		return *s
	}
	want := []string{
		`dnsParams.custom.search[0]: Invalid value: "$(HOST)": "$(HOST)" must be the last search entry`,
		`dnsParams.custom.options[0]: Invalid value: "ndots:16": ` + ndotsMsg,
	}
	for _, c := range carriers {
		t.Run(c.kind, func(t *testing.T) {
			t.Parallel()
			var full []string
			for _, w := range want {
				full = append(full, c.root+"."+w)
			}
			expectErrs(t, ValidateObjectDNS(c.build(metav1.ObjectMeta{}, spec()), nil, allOn), full...)
		})
	}
}

// TestObjectPolicyRatchet: the policy ratchet works through templates too.
func TestObjectPolicyRatchet(t *testing.T) {
	t.Parallel()
	opts := allOn
	opts.PodDNSAutopath = false
	var s dpcorev1.PodSpec
	s.DNSPolicy = dpcorev1.DNSClusterFirstWithAutopath
	for _, c := range carriers {
		t.Run(c.kind, func(t *testing.T) {
			t.Parallel()
			obj := c.build(metav1.ObjectMeta{}, s)
			expectErrs(t, ValidateObjectDNS(obj, nil, opts),
				c.root+`.dnsPolicy: Unsupported value: "ClusterFirstWithAutopath": `+noAuto)
			expectErrs(t, ValidateObjectDNS(obj, c.build(metav1.ObjectMeta{}, s), opts))
		})
	}
}

// TestObjectEdges covers inputs that carry no pod spec or no usable old
// object.
func TestObjectEdges(t *testing.T) {
	t.Parallel()
	bad := seedPod(underscore)
	if errs := ValidateObjectDNS(&corev1.ConfigMap{}, nil, strictOpts); errs != nil {
		t.Errorf("ConfigMap: %v", errs)
	}
	if errs := ValidateObjectDNS(nil, nil, strictOpts); errs != nil {
		t.Errorf("nil: %v", errs)
	}
	if errs := ValidateObjectDNS((*dpcorev1.Pod)(nil), nil, strictOpts); errs != nil {
		t.Errorf("typed nil: %v", errs)
	}
	if errs := ValidateObjectDNS(&dpcorev1.ReplicationController{}, nil, strictOpts); errs != nil {
		t.Errorf("ReplicationController without a template: %v", errs)
	}

	// A stored object of another kind cannot ratchet, even at the same path.
	rs := &dpappsv1.ReplicaSet{Spec: dpappsv1.ReplicaSetSpec{Template: tmpl(bad)}}
	dep := &dpappsv1.Deployment{Spec: dpappsv1.DeploymentSpec{Template: tmpl(bad)}}
	expectErrs(t, ValidateObjectDNS(dep, rs, strictOpts), "spec.template.spec."+underscoreErr)
	expectErrs(t, ValidateObjectDNS(dep, (*dpappsv1.Deployment)(nil), strictOpts), "spec.template.spec."+underscoreErr)
	expectErrs(t, ValidateObjectDNS(dep, &dpappsv1.Deployment{Spec: dpappsv1.DeploymentSpec{Template: tmpl(bad)}}, strictOpts))

	// A ReplicationController gaining a template has nothing to ratchet on.
	rc := &dpcorev1.ReplicationController{Spec: dpcorev1.ReplicationControllerSpec{Template: &dpcorev1.PodTemplateSpec{Spec: bad}}}
	expectErrs(t, ValidateObjectDNS(rc, &dpcorev1.ReplicationController{}, strictOpts), "spec.template.spec."+underscoreErr)
}
