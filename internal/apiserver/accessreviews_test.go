package apiserver

import (
	"context"
	"slices"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// bobMayReadPods allows system:masters everything and bob only to get
// pods in "team" and to ask about himself (system:basic-user's
// selfsubject* reviews): a stand-in for RBAC
// (internal/authz has the real authorizers' tables).
var bobMayReadPods = authorizer.AuthorizerFunc(func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	switch {
	case slices.Contains(a.GetUser().GetGroups(), "system:masters"):
		return authorizer.DecisionAllow, "", nil
	case a.GetUser().GetName() != "bob":
	case (a.GetResource() == "selfsubjectaccessreviews" || a.GetResource() == "selfsubjectrulesreviews") && a.GetVerb() == "create",
		a.GetResource() == "pods" && a.GetVerb() == "get" && a.GetNamespace() == "team":
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "no rule for " + a.GetUser().GetName(), nil
})

// TestAuthorizationThroughTheServer: with an authorizer, the server
// answers what it does not allow with kube's 403 (JSON or protobuf, as the
// client asks), and a SelfSubjectAccessReview (kubectl auth can-i) says
// what it would allow. Before, there was no authorization step and no
// access review (404).
func TestAuthorizationThroughTheServer(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run, err := startRunning(ctx, t.TempDir(), Config{Authorizer: bobMayReadPods})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = run.Stop(context.Background()) })
	admin, err := clientcmd.BuildConfigFromFlags("", run.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	bobCfg := rest.CopyConfig(admin)
	bobCfg.Impersonate = rest.ImpersonationConfig{UserName: "bob"}
	bob := kubernetes.NewForConfigOrDie(bobCfg)

	_, err = bob.CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{})
	const msg = `secrets is forbidden: User "bob" cannot list resource "secrets" in API group "" in the namespace "kube-system": no rule for bob`
	if !apierrors.IsForbidden(err) || err.Error() != msg {
		t.Errorf("bob lists secrets: %v, want the 403 %q", err, msg)
	}
	if _, err := bob.CoreV1().Pods("team").Get(ctx, "nosuch", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("bob gets a pod in team: %v, want NotFound (allowed, absent)", err)
	}

	for _, tc := range []struct {
		name    string
		client  kubernetes.Interface
		attrs   *authorizationv1.ResourceAttributes
		path    string
		allowed bool
	}{
		{"admin, secrets", kubernetes.NewForConfigOrDie(admin), &authorizationv1.ResourceAttributes{Verb: "list", Resource: "secrets", Namespace: "kube-system"}, "", true},
		{"bob, his pods", bob, &authorizationv1.ResourceAttributes{Verb: "get", Resource: "pods", Namespace: "team"}, "", true},
		{"bob, other pods", bob, &authorizationv1.ResourceAttributes{Verb: "get", Resource: "pods", Namespace: "default"}, "", false},
		{"bob, exec", bob, &authorizationv1.ResourceAttributes{Verb: "create", Resource: "pods", Subresource: "exec", Namespace: "team"}, "", false},
		{"bob, a path", bob, nil, "/metrics", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: tc.attrs}}
			if tc.path != "" {
				review.Spec.NonResourceAttributes = &authorizationv1.NonResourceAttributes{Path: tc.path, Verb: "get"}
			}
			got, err := tc.client.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got.Status.Allowed != tc.allowed || got.Status.Denied {
				t.Errorf("status %+v, want allowed=%v", got.Status, tc.allowed)
			}
		})
	}

	// Upstream's validation: exactly one kind of attributes.
	_, err = bob.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{}, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) {
		t.Errorf("empty review: %v, want 422", err)
	}
}
