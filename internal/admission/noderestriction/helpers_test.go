package noderestriction

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/component-base/featuregate"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
)

var (
	nodeA = &user.DefaultInfo{Name: "system:node:node-a", Groups: []string{"system:nodes", "system:authenticated"}}
	admin = &user.DefaultInfo{Name: "admin", Groups: []string{"system:masters"}}

	// The resources the cases write and seed, at the versions dnsplane
	// serves.
	pods            = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	nodes           = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}
	serviceAccounts = schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}
	pvcs            = schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}
	pvs             = schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumes"}
	csiDrivers      = schema.GroupVersionResource{Group: "storage.k8s.io", Version: "v1", Resource: "csidrivers"}
)

// Attributes are one write as internal/apiserver hands it over: its
// objects are the served ones (*dpcorev1.Pod for pods).
type Attributes struct {
	User        user.Info
	Operation   admission.Operation
	Resource    schema.GroupVersionResource
	Subresource string
	Namespace   string
	Name        string
	Object      runtime.Object
	OldObject   runtime.Object
}

func (in Attributes) record() admission.Attributes {
	return admission.NewAttributesRecord(in.Object, in.OldObject, schema.GroupVersionKind{}, in.Namespace, in.Name,
		in.Resource, in.Subresource, in.Operation, nil, false, in.User)
}

// store is what the plugin's informers list: each object under a key
// naming its resource, namespace and name (for the tables to read).
type store map[string]runtime.Object

func key(gvr schema.GroupVersionResource, namespace, name string) string {
	return gvr.String() + "|" + namespace + "|" + name
}

// config is what a case's plugin is initialised with; a nil Authorizer
// allows everything (the API server without authorization), nil Gates
// are kube's defaults.
type config struct {
	Objects    store
	Authorizer authorizer.Authorizer
	Gates      featuregate.FeatureGate
}

// hosted is the plugin initialised as internal/apiserver initialises it,
// with informers of a fake clientset holding cfg.Objects, synced.
func hosted(t testing.TB, cfg config) *Plugin {
	t.Helper()
	p, f := initialised(t, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() {
		cancel()
		f.Shutdown()
	})
	f.Start(ctx.Done())
	for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
		if !ok {
			t.Fatalf("informer of %v did not sync", typ)
		}
	}
	return p
}

// initialised is the plugin with its informers registered, not started.
func initialised(t testing.TB, cfg config) (*Plugin, informers.SharedInformerFactory) {
	t.Helper()
	var objs []runtime.Object
	for _, obj := range cfg.Objects {
		if pod, ok := obj.(*dpcorev1.Pod); ok {
			// The informers list through a k8s.io/api client.
			obj = &corev1.Pod{ObjectMeta: pod.ObjectMeta, Spec: pod.Spec.PodSpec, Status: pod.Status}
		}
		objs = append(objs, obj)
	}
	f := informers.NewSharedInformerFactory(fake.NewClientset(objs...), 0)
	gates := cfg.Gates
	if gates == nil {
		gates = utilfeature.DefaultFeatureGate
	}
	az := cfg.Authorizer
	if az == nil {
		az = authorizerfactory.NewAlwaysAllowAuthorizer()
	}
	p := New()
	initializer.New(nil, nil, f, az, gates, nil, nil, nil).Initialize(p)
	if err := admission.ValidateInitialization(p); err != nil {
		t.Fatal(err)
	}
	return p, f
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

func run(t *testing.T, p *Plugin, cases []admitCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := p.Admit(t.Context(), tc.in.record(), nil)
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
