package noderestriction

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
)

var (
	nodeA = &user.DefaultInfo{Name: "system:node:node-a", Groups: []string{"system:nodes", "system:authenticated"}}
	admin = &user.DefaultInfo{Name: "admin", Groups: []string{"system:masters"}}
)

// store is Objects over a fixed set: gvr, namespace and name of each.
type store map[string]runtime.Object

func key(gvr schema.GroupVersionResource, namespace, name string) string {
	return gvr.String() + "|" + namespace + "|" + name
}

func (s store) Get(_ context.Context, gvr schema.GroupVersionResource, namespace, name string) (any, error) {
	if obj, ok := s[key(gvr, namespace, name)]; ok {
		return obj.DeepCopyObject(), nil
	}
	return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
}

// granting allows the verb on the resource names listed and nothing else,
// as RBAC would with one rule per entry.
func granting(verb string, resources ...string) authorizer.Authorizer {
	return authorizer.AuthorizerFunc(func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
		for _, r := range resources {
			if a.GetVerb() == verb && a.GetResource() == r {
				return authorizer.DecisionAllow, "", nil
			}
		}
		return authorizer.DecisionNoOpinion, "", nil
	})
}

// gates are kube's default gates with set changed.
func gates(t *testing.T, set map[string]bool) featuregate.FeatureGate {
	t.Helper()
	g := utilfeature.DefaultMutableFeatureGate.DeepCopy()
	if err := g.SetFromMap(set); err != nil {
		t.Fatal(err)
	}
	return g
}

type admitCase struct {
	name string
	in   Attributes
	// want is "" when allowed, else a substring of the error's message:
	// a 403's unless code says otherwise.
	want string
	// code: 0 = a 403; 404 = the lookup's NotFound as it is; -1 = a
	// plain error, upstream's for what may be informer lag (a stale
	// UID), which a retry may pass.
	code int
}

func run(t *testing.T, p *Admission, cases []admitCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := p.Admit(t.Context(), tc.in)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want == "":
				return
			case err == nil:
				t.Fatalf("allowed, want an error with %q", tc.want)
			case !strings.Contains(err.Error(), tc.want):
				t.Fatalf("got %v, want %q", err, tc.want)
			}
			switch tc.code {
			case 0:
				if !apierrors.IsForbidden(err) {
					t.Fatalf("got %v, want a 403", err)
				}
			case 404:
				if !apierrors.IsNotFound(err) {
					t.Fatalf("got %v, want a 404", err)
				}
			default:
				if _, ok := err.(apierrors.APIStatus); ok {
					t.Fatalf("got the API error %v, want a plain one", err)
				}
			}
		})
	}
}
