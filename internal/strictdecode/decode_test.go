package strictdecode

import (
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	kjson "sigs.k8s.io/json"

	dpappsv1 "github.com/dnsplane/dnsplane/api/apps/v1"
	dpbatchv1 "github.com/dnsplane/dnsplane/api/batch/v1"
	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
)

// describe renders problems as `<upstream text> @line:col` for comparison.
func describe(ps []FieldProblem) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = fmt.Sprintf("%s @%d:%d", p.Error(), p.Pos.Line, p.Pos.Column)
	}
	return out
}

// splitOne splits an input that must hold exactly one document.
func splitOne(t *testing.T, in string) *Document {
	t.Helper()
	docs, err := Split([]byte(in))
	if err != nil {
		t.Fatalf("Split: %v", err)
	}
	if len(docs) != 1 {
		t.Fatalf("Split: got %d documents, want 1", len(docs))
	}
	return docs[0]
}

func newDeployment() any { return &dpappsv1.Deployment{} }
func newPod() any        { return &dpcorev1.Pod{} }

func TestDecodeProblems(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		into func() any
		want []string
	}{
		{
			name: "unknown at root, JSON",
			in:   `{"apiVersion":"v1","kind":"Pod","foo":1}`,
			into: newPod,
			want: []string{`unknown field "foo" @1:33`},
		},
		{
			name: "unknown at root, YAML",
			in:   "apiVersion: v1\nkind: Pod\nfoo: 1\n",
			into: newPod,
			want: []string{`unknown field "foo" @3:1`},
		},
		{
			name: "unknown in metadata, JSON",
			in:   "{\n \"metadata\": {\n  \"name\": \"a\",\n  \"nmae\": \"b\"\n }\n}",
			into: newPod,
			want: []string{`unknown field "metadata.nmae" @4:3`},
		},
		{
			name: "unknown in metadata, YAML",
			in:   "metadata:\n  name: a\n  nmae: b\n",
			into: newPod,
			want: []string{`unknown field "metadata.nmae" @3:3`},
		},
		{
			name: "unknown nested in a list, JSON",
			in: `{"spec":{"template":{"spec":{"containers":[
{"name":"a","image":"i"},
{"name":"b","foo":1}]}}}}`,
			into: newDeployment,
			want: []string{`unknown field "spec.template.spec.containers[1].foo" @3:13`},
		},
		{
			name: "unknown nested in a list, YAML",
			in: `spec:
  template:
    spec:
      containers:
      - name: a
        foo: x
`,
			into: newDeployment,
			want: []string{`unknown field "spec.template.spec.containers[0].foo" @6:9`},
		},
		{
			name: "unknown inside dnsplane's added fields, JSON",
			in:   `{"spec":{"template":{"spec":{"dnsPolicy":"Custom","dnsParams":{"custom":{"search":["a"],"bogus":true}}}}}}`,
			into: newDeployment,
			want: []string{`unknown field "spec.template.spec.dnsParams.custom.bogus" @1:89`},
		},
		{
			name: "unknown inside dnsplane's added fields, YAML",
			in: `spec:
  template:
    spec:
      dnsPolicy: Custom
      dnsParams:
        custom:
          search: [a]
          bogus: true
`,
			into: newDeployment,
			want: []string{`unknown field "spec.template.spec.dnsParams.custom.bogus" @8:11`},
		},
		{
			name: "several unknown at once, document order, JSON",
			in:   `{"zeta":1,"spec":{"b":1,"a":2,"replicas":1},"alpha":1}`,
			into: newDeployment,
			want: []string{`unknown field "zeta" @1:2`, `unknown field "spec.b" @1:19`, `unknown field "spec.a" @1:25`, `unknown field "alpha" @1:45`},
		},
		{
			name: "several unknown at once, document order, YAML",
			in:   "zeta: 1\nspec:\n  b: 1\n  a: 2\n  replicas: 1\nalpha: 1\n",
			into: newDeployment,
			want: []string{`unknown field "zeta" @1:1`, `unknown field "spec.b" @3:3`, `unknown field "spec.a" @4:3`, `unknown field "alpha" @6:1`},
		},
		{
			name: "case sensitive: Spec is unknown, JSON",
			in:   `{"Spec":{"replicas":1},"metadata":{"Name":"x"}}`,
			into: newDeployment,
			want: []string{`unknown field "Spec" @1:2`, `unknown field "metadata.Name" @1:36`},
		},
		{
			name: "case sensitive: Spec is unknown, YAML",
			in:   "Spec:\n  replicas: 1\nmetadata:\n  Name: x\n",
			into: newDeployment,
			want: []string{`unknown field "Spec" @1:1`, `unknown field "metadata.Name" @4:3`},
		},
		{
			name: "duplicate field, JSON",
			in:   "{\"spec\": {\n  \"paused\": true,\n  \"paused\": false\n}}",
			into: newDeployment,
			want: []string{`duplicate field "spec.paused" @3:3`},
		},
		{
			name: "duplicate field, YAML",
			in:   "spec:\n  paused: true\n  replicas: 1\n  paused: false\n",
			into: newDeployment,
			want: []string{`duplicate field "spec.paused" @4:3`},
		},
		{
			name: "three times is one problem, at the first repeat",
			in:   "spec:\n  paused: true\n  paused: false\n  paused: true\n",
			into: newDeployment,
			want: []string{`duplicate field "spec.paused" @3:3`},
		},
		{
			name: "duplicate inside list items, JSON",
			in:   `{"spec":{"containers":[{"name":"a"},{"name":"b","image":"x","name":"c"}]}}`,
			into: newPod,
			want: []string{`duplicate field "spec.containers[1].name" @1:61`},
		},
		{
			name: "duplicate inside list items, YAML",
			in:   "spec:\n  containers:\n  - name: a\n  - name: b\n    image: x\n    name: c\n",
			into: newPod,
			want: []string{`duplicate field "spec.containers[1].name" @6:5`},
		},
		{
			name: "duplicate map key in labels, JSON",
			in:   `{"metadata":{"labels":{"app":"a","tier":"b","app":"c"}}}`,
			into: newPod,
			want: []string{`duplicate field "metadata.labels.app" @1:45`},
		},
		{
			name: "duplicate map key in labels, YAML",
			in:   "metadata:\n  labels:\n    app: a\n    tier: b\n    app: c\n",
			into: newPod,
			want: []string{`duplicate field "metadata.labels.app" @5:5`},
		},
		{
			name: "dotted label key, YAML",
			in:   "metadata:\n  labels:\n    app.kubernetes.io/name: a\n    app.kubernetes.io/name: b\n",
			into: newPod,
			want: []string{`duplicate field "metadata.labels.app.kubernetes.io/name" @4:5`},
		},
		{
			name: "repeated parent is not the duplicate's position",
			in:   "{\"spec\":{\"paused\":true},\n\"spec\":{\"paused\":true,\n\"paused\":false}}",
			into: newDeployment,
			want: []string{`duplicate field "spec" @2:1`, `duplicate field "spec.paused" @3:1`},
		},
		{
			name: "unknown and duplicated is reported once, as unknown",
			in:   `{"spec":{"x":1,"x":2}}`,
			into: newDeployment,
			want: []string{`unknown field "spec.x" @1:10`},
		},
		{
			name: "escaped key",
			in:   `{"spec":{"a\u0062c":1}}`,
			into: newDeployment,
			want: []string{`unknown field "spec.abc" @1:10`},
		},
		{
			name: "key through a YAML alias is located at the anchor",
			in:   "x: &m {foo: 1}\nspec:\n  template:\n    metadata: *m\n",
			into: newDeployment,
			want: []string{`unknown field "x" @1:1`, `unknown field "spec.template.metadata.foo" @1:8`},
		},
		{
			name: "columns count characters, YAML",
			in:   "metadata: {labels: {ää: öö}, bogus: x}\nspéc: 1\n",
			into: newPod,
			want: []string{`unknown field "metadata.bogus" @1:30`, `unknown field "spéc" @2:1`},
		},
		{
			name: "columns count characters, JSON",
			in:   `{"metadata":{"labels":{"ää":"öö"},"bogus":"x"}}`,
			into: newPod,
			want: []string{`unknown field "metadata.bogus" @1:35`},
		},
		{
			name: "no problems",
			in:   "apiVersion: v1\nkind: Pod\nspec:\n  containers: [{name: a}]\n",
			into: newPod,
			want: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			doc := splitOne(t, tt.in)
			problems, err := doc.Decode(tt.into())
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			got := describe(problems)
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("problems:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// TestDecodeFatalErrorWins: a wrong type is the sigs.k8s.io/json error,
// unchanged, and strict problems are not reported with it.
func TestDecodeFatalErrorWins(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{
			name: "JSON",
			in:   `{"spec":{"replicas":"x","bogus":1}}`,
			want: "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32",
		},
		{
			name: "YAML",
			in:   "spec:\n  bogus: 1\n  replicas: x\n",
			want: "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32",
		},
		{
			name: "quoted number stays a string",
			in:   "spec:\n  replicas: \"3\"\n",
			want: "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32",
		},
		{
			// YAML 1.1, as sigs.k8s.io/yaml: `on` is a boolean, so a string
			// field rejects it exactly as upstream does.
			name: "on is a bool, as upstream",
			in:   "spec:\n  template:\n    spec:\n      schedulerName: on\n",
			want: "json: cannot unmarshal bool into Go struct field PodSpec.spec.template.spec.schedulerName of type string",
		},
		{
			name: "env value bool (a common manifest mistake)",
			in:   `{"spec":{"template":{"spec":{"containers":[{"name":"a","env":[{"name":"X","value":true}]}]}}}}`,
			want: "json: cannot unmarshal bool into Go struct field EnvVar.spec.template.spec.containers.env.value of type string",
		},
		{
			name: "document is not an object",
			in:   "- a\n- b\n",
			want: "json: cannot unmarshal array into Go value of type v1.Deployment",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			doc := splitOne(t, tt.in)
			problems, err := doc.Decode(&dpappsv1.Deployment{})
			if err == nil || err.Error() != tt.want {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if problems != nil {
				t.Errorf("problems reported with a fatal error: %v", problems)
			}
		})
	}
}

// TestDecodeReferenceBodies: the invJSON and invYAML bodies give the strict
// errors of the Strict JSON POST case of upstream's KEP-2885 integration test
// (k/k test/integration/apiserver/field_validation_test.go), in its order.
// For YAML the messages are the JSON ones (a deliberate change, see the
// package doc), with the duplicates on lines 5, 12, 14 and 28 as upstream
// reports them
// (spec.unknownDupe is reported once, as unknown, at its first line).
func TestDecodeReferenceBodies(t *testing.T) {
	t.Parallel()
	const row1 = `strict decoding error: duplicate field "metadata.name", unknown field "metadata.unknownMeta", unknown field "spec.unknown1", unknown field "spec.unknownDupe", duplicate field "spec.paused", unknown field "spec.template.spec.containers[0].unknownNested", duplicate field "spec.template.spec.containers[0].imagePullPolicy"`
	tests := []struct {
		name, in  string
		wantLines []int
	}{
		{"INV-JSON", invJSON, []int{6, 7, 11, 12, 15, 23, 25}},
		{"INV-YAML", invYAML, []int{5, 6, 10, 11, 14, 26, 28}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			doc := splitOne(t, tt.in)
			var d dpappsv1.Deployment
			problems, err := doc.Decode(&d)
			if err != nil {
				t.Fatal(err)
			}
			msgs := make([]string, len(problems))
			lines := make([]int, len(problems))
			for i, p := range problems {
				msgs[i] = p.Error()
				lines[i] = p.Pos.Line
			}
			// How apimachinery's runtime.NewStrictDecodingError joins them.
			if got := "strict decoding error: " + strings.Join(msgs, ", "); got != row1 {
				t.Errorf("got  %s\nwant %s", got, row1)
			}
			if fmt.Sprint(lines) != fmt.Sprint(tt.wantLines) {
				t.Errorf("lines = %v, want %v", lines, tt.wantLines)
			}
			// Warn semantics: the object is still decoded, last duplicate wins.
			if d.Name != "test-deployment" || d.Spec.Paused || d.Spec.Template.Spec.Containers[0].ImagePullPolicy != "Never" {
				t.Errorf("decoded object wrong: paused=%v pullPolicy=%q", d.Spec.Paused, d.Spec.Template.Spec.Containers[0].ImagePullPolicy)
			}
		})
	}
}

func TestFieldProblemError(t *testing.T) {
	t.Parallel()
	p := FieldProblem{Type: UnknownField, Path: `spec.a"b`}
	if got, want := p.Error(), `unknown field "spec.a\"b"`; got != want {
		t.Errorf("Error() = %s, want %s", got, want)
	}
}

// TestDecodeManyProblems: sigs.k8s.io/json stops at 100; all of those get a
// position.
func TestDecodeManyProblems(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("spec:\n")
	for i := 0; i < 150; i++ {
		fmt.Fprintf(&b, "  unknown%d: %d\n", i, i)
	}
	doc := splitOne(t, b.String())
	problems, err := doc.Decode(&dpappsv1.Deployment{})
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) != 100 {
		t.Fatalf("got %d problems, want 100", len(problems))
	}
	for i, p := range problems {
		if p.Pos.Line != i+2 || p.Pos.Column != 3 {
			t.Errorf("problem %d at %v, want line %d column 3", i, p.Pos, i+2)
		}
	}
}

// TestDecodeErrorsMatchUpstreamTypes: for manifests that do not use
// dnsplane's additions, decoding into dnsplane's types gives exactly the
// fatal error and problems that decoding into k8s.io/api's types gives,
// which is what kube-apiserver reports.
func TestDecodeErrorsMatchUpstreamTypes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		in       string
		ours     func() any
		upstream func() any
	}{
		{"replicas", `{"spec":{"replicas":"x"}}`, newDeployment, func() any { return &appsv1.Deployment{} }},
		{"paused", `{"spec":{"paused":"x"}}`, newDeployment, func() any { return &appsv1.Deployment{} }},
		{"env value", `{"spec":{"template":{"spec":{"containers":[{"env":[{"name":"X","value":true}]}]}}}}`, newDeployment, func() any { return &appsv1.Deployment{} }},
		{"template", `{"spec":{"template":1}}`, newDeployment, func() any { return &appsv1.Deployment{} }},
		{"kind", `{"kind":1}`, newDeployment, func() any { return &appsv1.Deployment{} }},
		{"name", `{"metadata":{"name":1}}`, newDeployment, func() any { return &appsv1.Deployment{} }},
		{"pod dnsPolicy", `{"spec":{"dnsPolicy":1}}`, newPod, func() any { return &corev1.Pod{} }},
		{"pod ports", `{"spec":{"containers":[{"ports":[{"containerPort":"80"}]}]}}`, newPod, func() any { return &corev1.Pod{} }},
		{"pod status", `{"status":{"phase":1}}`, newPod, func() any { return &corev1.Pod{} }},
		{"rc template", `{"spec":{"template":{"spec":{"hostNetwork":"yes"}}}}`, func() any { return &dpcorev1.ReplicationController{} }, func() any { return &corev1.ReplicationController{} }},
		{"cronjob", `{"spec":{"jobTemplate":{"spec":{"template":{"spec":{"containers":"x"}}}}}}`, func() any { return &dpbatchv1.CronJob{} }, func() any { return &batchv1.CronJob{} }},
		{"not an object", `[1]`, newPod, func() any { return &corev1.Pod{} }},
		{"problems", `{"spec":{"bogus":1,"containers":[{"name":"a","name":"b","x":1}]},"metadata":{"labels":{"a":"b","a":"c"}}}`, newPod, func() any { return &corev1.Pod{} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			doc := splitOne(t, tt.in)
			problems, err := doc.Decode(tt.ours())
			wantStrict, wantErr := kjson.UnmarshalStrict([]byte(tt.in), tt.upstream(), kjson.DisallowUnknownFields, kjson.DisallowDuplicateFields)
			if fmt.Sprint(err) != fmt.Sprint(wantErr) {
				t.Errorf("error:\n got %v\nwant %v", err, wantErr)
			}
			if fmt.Sprint(problemErrors(problems)) != fmt.Sprint(wantStrict) {
				t.Errorf("problems:\n got %v\nwant %v", problemErrors(problems), wantStrict)
			}
		})
	}
}

func problemErrors(ps []FieldProblem) []error {
	var out []error
	for _, p := range ps {
		out = append(out, p)
	}
	return out
}
