package serviceaccount

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubernetes/pkg/serviceaccount"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
	"github.com/dnsplane/dnsplane/internal/registry/rest"
)

// fakeObjects serves Get from a map; the token subresource writes nothing.
type fakeObjects struct {
	rest.Objects
	objs map[string]any // "resource/namespace/name"
}

func (f fakeObjects) Get(_ context.Context, gvr schema.GroupVersionResource, ns, name string) (any, error) {
	if o, ok := f.objs[gvr.Resource+"/"+ns+"/"+name]; ok {
		return o, nil
	}
	return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
}

// TestTokenClaims: a pod-bound token names the pod and the node it runs
// on (ServiceAccountTokenPodNodeInfo), the node's UID only when the node is
// registered, as upstream's TokenREST; a node-bound one names the node.
func TestTokenClaims(t *testing.T) {
	t.Parallel()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	gen, err := serviceaccount.JWTTokenGenerator("https://issuer.test", key)
	if err != nil {
		t.Fatal(err)
	}
	tokens := Tokens{Generator: gen, Audiences: []string{"https://issuer.test"}}
	pod := func(name, node string) *dpcorev1.Pod {
		p := &dpcorev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("pod-uid-of-" + name)}}
		p.Spec.ServiceAccountName, p.Spec.NodeName = "robot", node
		return p
	}
	objs := fakeObjects{objs: map[string]any{
		"serviceaccounts/ns/robot": &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "robot", Namespace: "ns", UID: "sa-uid"}},
		"pods/ns/on-n1":            pod("on-n1", "n1"),
		"pods/ns/on-gone":          pod("on-gone", "gone"),
		"nodes//n1":                &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "n1-uid"}},
	}}
	type ref struct{ Name, UID string }
	for _, tc := range []struct {
		name     string
		bound    *authenticationv1.BoundObjectReference
		pod      *ref
		node     *ref
		audience string
	}{
		{"unbound", nil, nil, nil, "https://issuer.test"},
		{"pod on a node", &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: "on-n1"},
			&ref{"on-n1", "pod-uid-of-on-n1"}, &ref{"n1", "n1-uid"}, "https://issuer.test"},
		{"pod on an unregistered node", &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: "on-gone"},
			&ref{"on-gone", "pod-uid-of-on-gone"}, &ref{"gone", ""}, "https://issuer.test"},
		{"node", &authenticationv1.BoundObjectReference{Kind: "Node", APIVersion: "v1", Name: "n1"}, nil, &ref{"n1", "n1-uid"}, "https://issuer.test"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			now := time.Now()
			tr, err := issue(context.Background(), objs, tokens, "ns", "robot",
				&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{BoundObjectRef: tc.bound}}, now)
			if err != nil {
				t.Fatal(err)
			}
			parts := strings.Split(tr.Status.Token, ".")
			if len(parts) != 3 {
				t.Fatalf("not a JWT: %q", tr.Status.Token)
			}
			payload, err := base64.RawURLEncoding.DecodeString(parts[1])
			if err != nil {
				t.Fatal(err)
			}
			var claims struct {
				Iss, Sub string
				Aud      []string
				Exp, Iat int64
				K8s      struct {
					Namespace      string
					ServiceAccount ref
					Pod, Node      *ref
				} `json:"kubernetes.io"`
			}
			if err := json.Unmarshal(payload, &claims); err != nil {
				t.Fatal(err)
			}
			if claims.Iss != "https://issuer.test" || claims.Sub != "system:serviceaccount:ns:robot" || len(claims.Aud) != 1 || claims.Aud[0] != tc.audience ||
				claims.Exp-claims.Iat != 3600 || claims.K8s.Namespace != "ns" || claims.K8s.ServiceAccount != (ref{"robot", "sa-uid"}) {
				t.Errorf("claims %s", payload)
			}
			if (claims.K8s.Pod == nil) != (tc.pod == nil) || (tc.pod != nil && *claims.K8s.Pod != *tc.pod) ||
				(claims.K8s.Node == nil) != (tc.node == nil) || (tc.node != nil && *claims.K8s.Node != *tc.node) {
				t.Errorf("bound claims %s, want pod %v node %v", payload, tc.pod, tc.node)
			}
			if exp := tr.Status.ExpirationTimestamp.Time; exp.Unix() != now.Add(time.Hour).Unix() {
				t.Errorf("expirationTimestamp %v, want an hour after %v", exp, now)
			}
		})
	}
}
