package apiserver

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/dnsplane/dnsplane/internal/testkit"
)

// TestServiceAccountToken: serviceaccounts/token issues a JWT signed with
// the server's key, with kube's claims and TokenREST's checks, and the
// server accepts it as the service account for as long as the account (and
// the object the token is bound to) exists.
func TestServiceAccountToken(t *testing.T) {
	t.Parallel()
	ts := sharedServer(t)
	ctx := context.Background()
	ns := newNamespace(t, ts.client)
	sas := ts.client.CoreV1().ServiceAccounts(ns)
	sa, err := sas.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "robot"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	whoami := func(token string) (authenticationv1.UserInfo, error) {
		cfg := rest.AnonymousClientConfig(ts.config)
		cfg.BearerToken = token
		c, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		r, err := c.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if err != nil {
			return authenticationv1.UserInfo{}, err
		}
		return r.Status.UserInfo, nil
	}

	before := time.Now()
	tr, err := sas.CreateToken(ctx, "robot", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if exp := tr.Status.ExpirationTimestamp.Time; exp.Before(before.Add(599*time.Second)) || exp.After(time.Now().Add(601*time.Second)) {
		t.Errorf("expirationTimestamp %v, want 600s from now", exp)
	}
	if tr.UID != sa.UID || !slices.Equal(tr.Spec.Audiences, []string{testIssuer}) {
		t.Errorf("TokenRequest uid %q audiences %v, want %q %v", tr.UID, tr.Spec.Audiences, sa.UID, []string{testIssuer})
	}
	user, err := whoami(tr.Status.Token)
	if err != nil {
		t.Fatal(err)
	}
	wantGroups := []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}
	if user.Username != "system:serviceaccount:"+ns+":robot" || user.UID != string(sa.UID) || !slices.Equal(user.Groups, wantGroups) {
		t.Errorf("the token authenticates as %+v", user)
	}
	if len(user.Extra["authentication.kubernetes.io/credential-id"]) != 1 {
		t.Errorf("no credential id (the token's jti) in %v", user.Extra)
	}

	// Bound to a pod that runs as the account: valid while the pod is.
	pods := ts.client.CoreV1().Pods(ns)
	p := pod("web")
	p.Spec.ServiceAccountName = "robot"
	p, err = pods.Create(ctx, p, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bound, err := sas.CreateToken(ctx, "robot", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: "web", UID: p.UID}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if user, err := whoami(bound.Status.Token); err != nil || user.Extra["authentication.kubernetes.io/pod-name"][0] != "web" {
		t.Errorf("pod-bound token: %+v %v", user, err)
	}
	if err := pods.Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// The authenticator reads the pod informer first, as kube-apiserver's
	// does: the token stops working once it has seen the delete.
	testkit.Poll(t, "the token of a deleted pod refused (401)", 10*time.Second, func(context.Context) (bool, error) {
		_, err := whoami(bound.Status.Token)
		return apierrors.IsUnauthorized(err), nil
	})

	if _, err := pods.Create(ctx, pod("other"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.client.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		account string
		req     authenticationv1.TokenRequest
		code    int32
		message string
	}{
		{"too short", "robot", authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](599)}},
			422, `TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 10 minutes`},
		{"too long", "robot", authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](1<<32 + 1)}},
			422, `TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 4294967297: may not specify a duration larger than 2^32 seconds`},
		{"missing account", "nope", authenticationv1.TokenRequest{}, 404, `serviceaccounts "nope" not found`},
		{"name differs", "robot", authenticationv1.TokenRequest{ObjectMeta: metav1.ObjectMeta{Name: "other"}},
			422, `TokenRequest.authentication.k8s.io "robot" is invalid: metadata.name: Invalid value: "other": must match the service account name if specified`},
		{"uid differs", "robot", authenticationv1.TokenRequest{ObjectMeta: metav1.ObjectMeta{UID: "other"}},
			409, `Operation cannot be fulfilled on TokenRequest.authentication.k8s.io "robot": the UID in the token request (other) does not match the UID of the service account`},
		{"unbindable kind", "robot", authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
			BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "ConfigMap", APIVersion: "v1", Name: "x"}}},
			400, "cannot bind token to object of type /v1, Kind=ConfigMap"},
		{"pod of another account", "robot", authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
			BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: "other"}}},
			400, `cannot bind token for serviceaccount "robot" to pod running with different serviceaccount name.`},
		{"secret uid differs", "robot", authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
			BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Secret", APIVersion: "v1", Name: "s", UID: "other"}}},
			409, `Operation cannot be fulfilled on Secret "s": the UID in the bound object reference (other) does not match the UID in record.`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := sas.CreateToken(ctx, tc.account, &tc.req, metav1.CreateOptions{})
			code, msg := apiStatusOf(err)
			if code != tc.code || !strings.HasPrefix(msg, tc.message) {
				t.Errorf("got %d %q, want %d %q", code, msg, tc.code, tc.message)
			}
		})
	}

	// Deleting the account ends its tokens.
	if err := sas.Delete(ctx, "robot", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	testkit.Poll(t, "the token of a deleted account refused (401)", 10*time.Second, func(context.Context) (bool, error) {
		_, err := whoami(tr.Status.Token)
		return apierrors.IsUnauthorized(err), nil
	})
}
