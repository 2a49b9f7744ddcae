package e2e

import (
	"bufio"
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// decisionsHeading is the docs/apiserver.md table TestDecisionsByIdentity
// checks, row by row: what each identity of `up` may do, as the server's
// authorizer decides.
const decisionsHeading = "#### Decisions by identity, tested"

// decision is one row: the user and groups, the request, and whether the
// authorizer allows it.
type decision struct {
	line                            int
	user                            string
	groups                          []string
	verb, resource, namespace, name string
	allowed                         bool
}

// TestDecisionsByIdentity: every row of docs/apiserver.md's table of
// decisions, asked as a SubjectAccessReview of `up --nodes 2` with pods
// bound to each node that use Secrets and ConfigMaps, matches the
// authorizer's answer (Node, RBAC, upstream's bootstrap policy and
// dnsplane's roles). The table is the documentation of what each identity
// may do, so it cannot drift from the code.
func TestDecisionsByIdentity(t *testing.T) {
	requireRoot(t)
	rows := readDecisions(t, "../../docs/apiserver.md")
	c := startNodesUp(t, 2, 91, 92)
	client := clientFor(t, c.Kubeconfig)
	ctx := t.Context()
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Pods bound to each node, using a Secret and a ConfigMap: what the
	// Node authorizer's graph follows.
	for _, p := range []struct{ name, node, secret, config string }{
		{"db-client", "node-1", "db", "db-config"},
		{"other", "node-2", "other-secret", "other-config"},
	} {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: p.name, Namespace: "team"},
			Spec: corev1.PodSpec{NodeName: p.node, Containers: []corev1.Container{{Name: "c", Image: "example"}},
				Volumes: []corev1.Volume{
					{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: p.secret}}},
					{Name: "c", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: p.config}}}},
				}},
		}
		if _, err := client.CoreV1().Pods("team").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// The graph learns of the pods through an informer.
	eventually(t, 10*time.Second, 50*time.Millisecond, func() (bool, string) {
		ok, err := allowed(ctx, client, decision{user: "system:node:node-2", groups: []string{"system:nodes", "system:authenticated"},
			verb: "get", resource: "configmaps", namespace: "team", name: "other-config"})
		return ok && err == nil, "node-2 may not read the config map of its pod yet"
	})
	for _, d := range rows {
		got, err := allowed(ctx, client, d)
		if err != nil {
			t.Errorf("docs/apiserver.md:%d: %v", d.line, err)
			continue
		}
		if got != d.allowed {
			t.Errorf("docs/apiserver.md:%d: %s (%s) %s %s in %q named %q: the authorizer says allowed=%v, the table %v",
				d.line, d.user, strings.Join(d.groups, ","), d.verb, d.resource, d.namespace, d.name, got, d.allowed)
		}
	}
}

// allowed asks the server whether d's user may make d's request.
func allowed(ctx context.Context, client kubernetes.Interface, d decision) (bool, error) {
	spec := authorizationv1.SubjectAccessReviewSpec{User: d.user, Groups: d.groups}
	if strings.HasPrefix(d.resource, "/") {
		spec.NonResourceAttributes = &authorizationv1.NonResourceAttributes{Path: d.resource, Verb: d.verb}
	} else {
		resource, subresource, _ := strings.Cut(d.resource, "/")
		resource, group, _ := strings.Cut(resource, ".")
		spec.ResourceAttributes = &authorizationv1.ResourceAttributes{Verb: d.verb, Group: group, Resource: resource,
			Subresource: subresource, Namespace: d.namespace, Name: d.name}
	}
	r, err := client.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: spec}, metav1.CreateOptions{})
	if err != nil {
		return false, err
	}
	return r.Status.Allowed, nil
}

// readDecisions parses the table under decisionsHeading: columns user,
// groups (comma-separated), verb, resource (plural[.group][/subresource],
// or a non-resource path), namespace, name, allowed (yes/no), and a note
// the test ignores. Backquotes are dropped. Every authenticated user is in
// system:authenticated, so it is added unless system:unauthenticated is
// named, as kube-apiserver's authenticators do.
func readDecisions(t *testing.T, path string) []decision {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []decision
	in, line := false, 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line++
		text := sc.Text()
		switch {
		case text == decisionsHeading:
			in = true
			continue
		case !in:
			continue
		case strings.HasPrefix(text, "#"):
			in = false
			continue
		case !strings.HasPrefix(text, "|") || strings.HasPrefix(text, "|---") || strings.HasPrefix(text, "| user "):
			continue
		}
		cells := strings.Split(strings.Trim(text, "|"), "|")
		if len(cells) != 8 {
			t.Fatalf("docs/apiserver.md:%d: want 8 cells, got %d: %s", line, len(cells), text)
		}
		for i := range cells {
			cells[i] = strings.TrimSpace(strings.ReplaceAll(cells[i], "`", ""))
		}
		d := decision{line: line, user: cells[0], verb: cells[2], resource: cells[3], namespace: cells[4], name: cells[5]}
		for g := range strings.SplitSeq(cells[1], ",") {
			if g = strings.TrimSpace(g); g != "" {
				d.groups = append(d.groups, g)
			}
		}
		if !slices.Contains(d.groups, "system:unauthenticated") {
			d.groups = append(d.groups, "system:authenticated")
		}
		switch cells[6] {
		case "yes":
			d.allowed = true
		case "no":
		default:
			t.Fatalf("docs/apiserver.md:%d: allowed is %q, want yes or no", line, cells[6])
		}
		out = append(out, d)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) < 20 {
		t.Fatalf("docs/apiserver.md: %d rows under %q, want the table", len(out), decisionsHeading)
	}
	return out
}
