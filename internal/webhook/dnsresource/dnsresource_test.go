package dnsresource

import (
	"context"
	"net/http"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

func rawJSON(t testing.TB, doc string) []byte {
	t.Helper()
	b, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func request(op admissionv1.Operation, obj, old []byte) *admissionv1.AdmissionRequest {
	return &admissionv1.AdmissionRequest{
		UID: "uid-1", Kind: metaGVK(), Resource: Resource, Name: "default", Operation: op,
		Object: runtime.RawExtension{Raw: obj}, OldObject: runtime.RawExtension{Raw: old},
	}
}

func TestReview(t *testing.T) {
	t.Parallel()
	valid := rawJSON(t, object(forward("corp.example", "192.0.2.1")))
	ctx := context.Background()
	tests := []struct {
		name      string
		v         Validator
		req       *admissionv1.AdmissionRequest
		allowed   bool
		code      int32
		message   string   // a substring of the status message
		causePath []string // the causes' fields, in order
	}{
		{name: "valid create", req: request(admissionv1.Create, valid, nil), allowed: true},
		{name: "invalid create", req: request(admissionv1.Create, rawJSON(t, object(forward("corp.example", "dns.bar.com"))), nil),
			code:      http.StatusUnprocessableEntity,
			message:   `DNS.operator.dnsplane.io "default" is invalid: spec.pluginConfig.forwardPlugins[0].nameServers[0]: Invalid value: "dns.bar.com": must be an IP address`,
			causePath: []string{"spec.pluginConfig.forwardPlugins[0].nameServers[0]"}},
		{name: "name not default", req: request(admissionv1.Create, []byte(strings.Replace(string(valid), `"default"`, `"other"`, 1)), nil),
			code: http.StatusUnprocessableEntity, message: `DNS.operator.dnsplane.io "other" is invalid`, causePath: []string{"metadata.name"}},
		{name: "the configured cluster domain", v: Validator{ClusterDomain: "corp.internal"},
			req:  request(admissionv1.Create, rawJSON(t, object(forward("svc.corp.internal", "192.0.2.1"))), nil),
			code: http.StatusUnprocessableEntity, message: `must not be a subdomain of the cluster domain "corp.internal"`,
			causePath: []string{"spec.pluginConfig.forwardPlugins[0].domain"}},
		{name: "cluster.local is not the configured cluster domain", v: Validator{ClusterDomain: "corp.internal"},
			req: request(admissionv1.Create, rawJSON(t, object(forward("cluster.local", "192.0.2.1"))), nil), allowed: true},
		{name: "update adds an invalid forward plugin",
			req:  request(admissionv1.Update, rawJSON(t, object("  pluginConfig:\n    forwardPlugins:\n    - {domain: a.example, nameServers: [192.0.2.1]}\n    - {domain: a.example, nameServers: [192.0.2.2]}\n")), valid),
			code: http.StatusUnprocessableEntity, message: "Duplicate value", causePath: []string{"spec.pluginConfig.forwardPlugins[1].domain"}},
		{name: "update keeps what was stored before the rules",
			req: request(admissionv1.Update, rawJSON(t, object(forward("cluster.local", "192.0.2.1")+"  logLevel: Debug\n")),
				rawJSON(t, object(forward("cluster.local", "192.0.2.1")))), allowed: true},
		{name: "status update", req: func() *admissionv1.AdmissionRequest {
			r := request(admissionv1.Update, []byte("{"), []byte("{"))
			r.SubResource = "status"
			return r
		}(), allowed: true},
		{name: "delete", req: request(admissionv1.Delete, nil, valid), allowed: true},
		{name: "no request", req: nil, code: http.StatusBadRequest, message: "no admission request"},
		{name: "another kind", req: func() *admissionv1.AdmissionRequest {
			r := request(admissionv1.Create, valid, nil)
			r.Kind = metav1.GroupVersionKind{Version: "v1", Kind: "Pod"}
			return r
		}(), code: http.StatusBadRequest, message: "reviews DNS.operator.dnsplane.io objects, not Pod"},
		{name: "no object", req: request(admissionv1.Create, nil, nil), code: http.StatusBadRequest, message: "the request has no object"},
		{name: "not JSON", req: request(admissionv1.Create, []byte("spec: {}"), nil), code: http.StatusBadRequest, message: "decoding the DNS object"},
		{name: "a bad duration", req: request(admissionv1.Create, rawJSON(t, object("  cache: {positiveTTL: soon}\n")), nil),
			code: http.StatusBadRequest, message: `decoding the DNS object: time: invalid duration "soon"`},
		{name: "another apiVersion", req: request(admissionv1.Create, []byte(strings.Replace(string(valid), "operator.dnsplane.io/v1", "operator.dnsplane.io/v2", 1)), nil),
			code: http.StatusBadRequest, message: `apiVersion "operator.dnsplane.io/v2"`},
		{name: "update without the stored object", req: request(admissionv1.Update, valid, nil), code: http.StatusBadRequest, message: "oldObject"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			resp := tc.v.Review(ctx, tc.req)
			if tc.req != nil && resp.UID != tc.req.UID {
				t.Errorf("UID %q, want the request's %q", resp.UID, tc.req.UID)
			}
			if resp.Allowed != tc.allowed {
				t.Fatalf("allowed %v, want %v: %+v", resp.Allowed, tc.allowed, resp.Result)
			}
			if tc.allowed {
				return
			}
			if resp.Result == nil || resp.Result.Code != tc.code || !strings.Contains(resp.Result.Message, tc.message) {
				t.Fatalf("result %+v, want code %d and %q", resp.Result, tc.code, tc.message)
			}
			var paths []string
			if resp.Result.Details != nil {
				for _, c := range resp.Result.Details.Causes {
					paths = append(paths, c.Field)
				}
			}
			if strings.Join(paths, " ") != strings.Join(tc.causePath, " ") {
				t.Errorf("causes %v, want %v", paths, tc.causePath)
			}
		})
	}
}

// FuzzReview: whatever the object bytes, the webhook answers (never
// panics), and a denial says why.
func FuzzReview(f *testing.F) {
	for _, tc := range ruleCases {
		f.Add(rawJSON(f, tc.doc), false)
	}
	for _, tc := range validCases {
		// Not the 150 forward plugins: the fuzzer spends its time
		// minimizing inputs that large.
		if len(tc.doc) < 4096 {
			f.Add(rawJSON(f, tc.doc), true)
		}
	}
	f.Add([]byte(`{"apiVersion":"operator.dnsplane.io/v1","kind":"DNS","spec":{"pluginConfig":{"forwardPlugins":[null]}}}`), false)
	f.Add([]byte(`{"apiVersion":"operator.dnsplane.io/v1","kind":"DNS","spec":null}`), true)
	f.Add([]byte(`null`), false)
	old := rawJSON(f, object(forward("corp.example", "192.0.2.1")))
	v := Validator{OwnAddresses: own}
	f.Fuzz(func(t *testing.T, raw []byte, update bool) {
		req := request(admissionv1.Create, raw, nil)
		if update {
			req = request(admissionv1.Update, raw, old)
		}
		resp := v.Review(context.Background(), req)
		if resp == nil || resp.UID != req.UID {
			t.Fatalf("response %+v", resp)
		}
		if !resp.Allowed && (resp.Result == nil || resp.Result.Message == "") {
			t.Fatalf("denied without a message: %+v", resp.Result)
		}
	})
}

func TestNewValidator(t *testing.T) {
	t.Parallel()
	v, err := NewValidator("corp.internal", []string{"10.96.0.10"}, []string{"169.254.20.10", "fd00::a"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for ns, want := range map[string]bool{
		"10.96.0.10": false, "169.254.20.10:53": false, "[fd00::a]:53": false,
		"10.96.0.10:5353": true, "192.0.2.1": true,
	} {
		resp := v.Review(ctx, request(admissionv1.Create, rawJSON(t, object(forward("corp.example", ns))), nil))
		if resp.Allowed != want {
			t.Errorf("nameserver %s: allowed %v, want %v (%+v)", ns, resp.Allowed, want, resp.Result)
		}
	}
	if resp := v.Review(ctx, request(admissionv1.Create, rawJSON(t, object(forward("corp.internal", "192.0.2.1"))), nil)); resp.Allowed {
		t.Error("the cluster domain corp.internal was forwarded")
	}
	if _, err := NewValidator("", []string{"dns"}, nil); err == nil {
		t.Error("NewValidator accepted a host name as an address")
	}
}
