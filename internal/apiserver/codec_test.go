package apiserver

import (
	"bytes"
	"context"
	"encoding/hex"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"
)

// protoBody encodes obj as client-go's typed clients do: the k8s\x00
// envelope around a runtime.Unknown naming the object's kind.
func protoBody(t *testing.T, obj runtime.Object) string {
	t.Helper()
	var buf bytes.Buffer
	if err := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme).Encode(obj, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// TestProtobufBodies checks that only real protobuf is accepted under
// application/vnd.kubernetes.protobuf. JSON or YAML sent under that type used
// to be sniffed and decoded by client-go's universal deserializer, bypassing
// the strict decoder: unknown and duplicate fields and dnsParams were dropped
// without a word and the object was stored (201).
func TestProtobufBodies(t *testing.T) {
	ts := sharedServer(t)
	ns := newNamespace(t, ts.client)
	call := rawCaller(t, ts)
	cms := ts.run.URL + "/api/v1/namespaces/" + ns + "/configmaps"
	pods := ts.run.URL + "/api/v1/namespaces/" + ns + "/pods"

	jsonCM := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"json"},"bogus":1,"data":{"a":"1","a":"2"}}`
	yamlCM := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yaml\n"
	jsonPod := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"dnsPolicy":"Custom","dnsParams":{"custom":{"search":["a.b"]}},"containers":[{"name":"c","image":"x"}]}}`
	goodCM := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "proto"}, Data: map[string]string{"k": "v"}}
	secret := &corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}, ObjectMeta: metav1.ObjectMeta{Name: "s"}}
	const notProto = "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]"

	tests := []struct {
		name, method, url, body string
		code                    int
		msg                     string
	}{
		{"JSON labelled protobuf", "POST", cms, jsonCM, 400,
			"the object provided is unrecognized (must be of type ConfigMap): " + notProto + " (" + jsonCM[:30] + " ...)"},
		{"YAML labelled protobuf", "POST", cms, yamlCM, 400,
			"the object provided is unrecognized (must be of type ConfigMap): " + notProto + " (" + hex.EncodeToString([]byte(yamlCM[:30])) + " ...)"},
		{"short JSON is quoted whole", "POST", cms, `{}`, 400,
			"the object provided is unrecognized (must be of type ConfigMap): " + notProto + " ({})"},
		{"pod with dnsParams labelled protobuf", "POST", pods, jsonPod, 400,
			"the object provided is unrecognized (must be of type Pod): " + notProto + " (" + jsonPod[:30] + " ...)"},
		{"empty body", "POST", cms, "", 400,
			"the object provided is unrecognized (must be of type ConfigMap): empty data (<empty>)"},
		{"envelope only", "POST", cms, "k8s\x00", 400,
			"the object provided is unrecognized (must be of type ConfigMap): empty body (6b387300)"},
		{"JSON update labelled protobuf", "PUT", cms + "/json", jsonCM, 400,
			"the object provided is unrecognized (must be of type ConfigMap): " + notProto},
		{"real protobuf of another kind", "POST", cms, protoBody(t, secret), 400,
			"the kind in the data (Secret) does not match the expected kind (ConfigMap)"},
		{"real protobuf", "POST", cms, protoBody(t, goodCM), 201, ""},
		{"JSON delete options labelled protobuf", "DELETE", cms + "/proto", `{"dryRun":["All"]}`, 400,
			`DeleteOptions in version "v1" cannot be handled as a DeleteOptions: ` + notProto},
		{"protobuf patch", "PATCH", cms + "/proto", protoBody(t, goodCM), 415,
			"the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, msg, _ := call(tt.method, tt.url, mediaProtobuf, tt.body)
			if code != tt.code || len(msg) < len(tt.msg) || msg[:len(tt.msg)] != tt.msg {
				t.Errorf("got %d %q\nwant %d %q", code, msg, tt.code, tt.msg)
			}
		})
	}

	ctx := context.Background()
	got, err := ts.client.CoreV1().ConfigMaps(ns).Get(ctx, "proto", metav1.GetOptions{})
	if err != nil || got.Data["k"] != "v" {
		t.Errorf("real protobuf: %+v %v", got, err)
	}
	for _, name := range []string{"json", "yaml"} {
		if _, err := ts.client.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("configmap %s was stored: %v", name, err)
		}
	}
	if _, err := ts.client.CoreV1().Pods(ns).Get(ctx, "p", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("pod p was stored without its dnsParams: %v", err)
	}
}
