package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"
)

// podYAML is a minimal valid Pod manifest with the label version=<version>.
func podYAML(name, version string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
  labels:
    app: e2e
    version: %q
spec:
  containers:
  - name: main
    image: example.com/main:1
`, name, version)
}

// twoContainerPodYAML is a Pod whose containers a strategic merge patch
// merges by name.
func twoContainerPodYAML(name string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
  labels:
    app: e2e
spec:
  containers:
  - name: a
    image: example.com/a:1
  - name: b
    image: example.com/b:1
`, name)
}

// jsonpath returns kubectl's -o jsonpath output for one object.
// deploymentYAML is a Deployment of no replicas (no deployment controller
// runs to act on it).
func deploymentYAML(name string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[1]s
spec:
  replicas: 0
  selector:
    matchLabels: {app: %[1]s}
  template:
    metadata:
      labels: {app: %[1]s}
    spec:
      containers:
      - name: main
        image: example.com/main:1
`, name)
}

// ownedReplicaSetYAML is a ReplicaSet the Deployment name (uid) owns, as
// the deployment controller would create it.
func ownedReplicaSetYAML(name, uid string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: %[1]s
  ownerReferences:
  - {apiVersion: apps/v1, kind: Deployment, name: %[1]s, uid: %[2]s, controller: true, blockOwnerDeletion: true}
spec:
  replicas: 0
  selector:
    matchLabels: {app: %[1]s}
  template:
    metadata:
      labels: {app: %[1]s}
    spec:
      containers:
      - name: main
        image: example.com/main:1
`, name, uid)
}

func jsonpath(t *testing.T, kc, ns, kind, name, expr string) string {
	t.Helper()
	return mustKubectl(t, kc, "", "-n", ns, "get", kind, name, "-o", "jsonpath="+expr)
}

// labelsOf is the object's labels as kubectl returns them.
func labelsOf(t *testing.T, kc, ns, kind, name string) map[string]string {
	t.Helper()
	var labels map[string]string
	out := jsonpath(t, kc, ns, kind, name, "{.metadata.labels}")
	if err := json.Unmarshal([]byte(out), &labels); err != nil {
		t.Fatalf("labels of %s/%s: %q: %v", kind, name, out, err)
	}
	return labels
}

func wantLabels(t *testing.T, kc, ns, kind, name string, want map[string]string) {
	t.Helper()
	if got := labelsOf(t, kc, ns, kind, name); !mapsEqual(got, want) {
		t.Errorf("labels of %s/%s = %v, want %v", kind, name, got, want)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestKubectl drives the shared server with the real kubectl, one namespace
// per subtest, and checks what kubectl prints.
func TestKubectl(t *testing.T) {
	requireKubectl(t)
	kc := sharedServer(t).Kubeconfig

	t.Run("create", func(t *testing.T) {
		ns := newNamespace(t, kc)
		path := writeFile(t, "pod.yaml", podYAML("x", "1"))
		wantKubectl(t, kc, "", ok("pod/x created"), "-n", ns, "create", "-f", path)
		// From stdin too, and a second create of the same name conflicts.
		wantKubectl(t, kc, podYAML("from-stdin", "1"), ok("pod/from-stdin created"), "-n", ns, "create", "-f", "-")
		wantKubectl(t, kc, "", failed(`Error from server (AlreadyExists): error when creating "`+path+`": pods "x" already exists`),
			"-n", ns, "create", "-f", path)
	})

	t.Run("get table", func(t *testing.T) {
		ns := newNamespace(t, kc)
		wantKubectl(t, kc, "", run{stderr: "No resources found in " + ns + " namespace.\n"}, "-n", ns, "get", "pods")
		mustKubectl(t, kc, podYAML("g", "1"), "-n", ns, "create", "-f", "-")
		wantTable(t, mustKubectl(t, kc, "", "-n", ns, "get", "pods"),
			[]string{"NAME", "READY", "STATUS", "RESTARTS", "AGE"}, []string{"g", "0/1", "Pending", "0"})
		wantKubectl(t, kc, "", ok("pod/g"), "-n", ns, "get", "pods", "-o", "name")
		wantKubectl(t, kc, "", failed(`Error from server (NotFound): pods "nope" not found`), "-n", ns, "get", "pod", "nope")
	})

	t.Run("get with selectors and paging", func(t *testing.T) {
		ns := newNamespace(t, kc)
		for _, name := range []string{"s1", "s2", "s3"} {
			mustKubectl(t, kc, podYAML(name, name), "-n", ns, "create", "-f", "-")
		}
		none := run{stderr: "No resources found in " + ns + " namespace.\n"}
		// Selectors are applied by the server.
		wantKubectl(t, kc, "", ok("pod/s2"), "-n", ns, "get", "pods", "-l", "version=s2", "-o", "name")
		wantKubectl(t, kc, "", ok("pod/s1\npod/s3"), "-n", ns, "get", "pods", "-l", "app=e2e,version notin (s2)", "-o", "name")
		wantKubectl(t, kc, "", none, "-n", ns, "get", "pods", "-l", "app=other")
		wantKubectl(t, kc, "", ok("pod/s3"), "-n", ns, "get", "pods", "--field-selector", "metadata.name=s3", "-o", "name")
		wantKubectl(t, kc, "", ok("pod/s1\npod/s2\npod/s3"), "-n", ns, "get", "pods", "--field-selector", "status.phase=Pending,spec.nodeName=", "-o", "name")
		wantKubectl(t, kc, "", failed(`Error from server (BadRequest): Unable to find "/v1, Resource=pods" that match label selector "", field selector "spec.bogus=x": field label not supported: spec.bogus`),
			"-n", ns, "get", "pods", "--field-selector", "spec.bogus=x")
		// limit + continue, one object a page.
		wantKubectl(t, kc, "", ok("pod/s1\npod/s2\npod/s3"), "-n", ns, "get", "pods", "--chunk-size=1", "-o", "name")
		wantTable(t, mustKubectl(t, kc, "", "-n", ns, "get", "pods", "--chunk-size=2", "-l", "version=s3"),
			[]string{"NAME", "READY", "STATUS", "RESTARTS", "AGE"}, []string{"s3", "0/1", "Pending", "0"})
		// A bad label selector is a 400 that names the problem.
		_, errOut, code := kubectl(t, kc, "", "-n", ns, "get", "pods", "-l", "!!bad")
		if code != 1 || !strings.Contains(errOut, "(BadRequest)") || !strings.Contains(errOut, "found '!', expected: identifier") {
			t.Errorf("bad label selector: exit %d, stderr %q", code, errOut)
		}
		t.Run("bad label selector wording", func(t *testing.T) {
			wantKubectl(t, kc, "", failed(`Error from server (BadRequest): Unable to find "/v1, Resource=pods" that match label selector "!!bad", field selector "": unable to parse requirement: found '!', expected: identifier`),
				"-n", ns, "get", "pods", "-l", "!!bad")
		})
	})

	t.Run("get -o yaml and -o json", func(t *testing.T) {
		ns := newNamespace(t, kc)
		mustKubectl(t, kc, podYAML("o", "1"), "-n", ns, "create", "-f", "-")
		var fromJSON, fromYAML corev1.Pod
		if out := mustKubectl(t, kc, "", "-n", ns, "get", "pod", "o", "-o", "json"); json.Unmarshal([]byte(out), &fromJSON) != nil {
			t.Fatalf("-o json is not a Pod:\n%s", out)
		}
		if out := mustKubectl(t, kc, "", "-n", ns, "get", "pod", "o", "-o", "yaml"); yaml.Unmarshal([]byte(out), &fromYAML) != nil {
			t.Fatalf("-o yaml is not a Pod:\n%s", out)
		}
		for format, p := range map[string]corev1.Pod{"json": fromJSON, "yaml": fromYAML} {
			rv, err := strconv.ParseInt(p.ResourceVersion, 10, 64)
			switch {
			case p.APIVersion != "v1" || p.Kind != "Pod":
				t.Errorf("-o %s: apiVersion %q kind %q, want v1 Pod", format, p.APIVersion, p.Kind)
			case p.Name != "o" || p.Namespace != ns:
				t.Errorf("-o %s: %s/%s, want %s/o", format, p.Namespace, p.Name, ns)
			case len(p.UID) != 36:
				t.Errorf("-o %s: uid %q is not a UUID", format, p.UID)
			case err != nil || rv <= 0:
				t.Errorf("-o %s: resourceVersion %q is not a positive integer", format, p.ResourceVersion)
			case p.CreationTimestamp.IsZero():
				t.Errorf("-o %s: no creationTimestamp", format)
			case p.Spec.DNSPolicy != corev1.DNSClusterFirst:
				t.Errorf("-o %s: dnsPolicy %q, want the default ClusterFirst", format, p.Spec.DNSPolicy)
			case p.Status.Phase != corev1.PodPending:
				t.Errorf("-o %s: phase %q, want Pending", format, p.Status.Phase)
			}
		}
		if fromJSON.UID != fromYAML.UID || fromJSON.ResourceVersion != fromYAML.ResourceVersion {
			t.Errorf("-o json and -o yaml disagree: uid %s/%s resourceVersion %s/%s",
				fromJSON.UID, fromYAML.UID, fromJSON.ResourceVersion, fromYAML.ResourceVersion)
		}
	})

	t.Run("apply", func(t *testing.T) {
		ns := newNamespace(t, kc)
		path := writeFile(t, "pod.yaml", podYAML("a", "1"))
		wantKubectl(t, kc, "", ok("pod/a created"), "-n", ns, "apply", "-f", path)
		rewriteFile(t, path, podYAML("a", "2"))
		wantKubectl(t, kc, "", ok("pod/a configured"), "-n", ns, "apply", "-f", path)
		rv := jsonpath(t, kc, ns, "pod", "a", "{.metadata.resourceVersion}")
		wantKubectl(t, kc, "", ok("pod/a unchanged"), "-n", ns, "apply", "-f", path)
		wantLabels(t, kc, ns, "pod", "a", map[string]string{"app": "e2e", "version": "2"})
		if got := jsonpath(t, kc, ns, "pod", "a", "{.metadata.resourceVersion}"); got != rv {
			t.Errorf("an unchanged apply moved resourceVersion %s to %s", rv, got)
		}
		last := jsonpath(t, kc, ns, "pod", "a", `{.metadata.annotations.kubectl\.kubernetes\.io/last-applied-configuration}`)
		if !strings.Contains(last, `"version":"2"`) {
			t.Errorf("last-applied-configuration %q does not hold the applied label", last)
		}
	})

	t.Run("replace", func(t *testing.T) {
		ns := newNamespace(t, kc)
		mustKubectl(t, kc, podYAML("r", "1"), "-n", ns, "create", "-f", "-")
		// ServiceAccount admission named the default account on create and
		// a pod update may not change it, so a replacing manifest names it,
		// as against kube-apiserver (the tolerations admission added come
		// back on the update by themselves).
		path := writeFile(t, "pod.yaml", podYAML("r", "2")+"  serviceAccountName: default\n")
		wantKubectl(t, kc, "", ok("pod/r replaced"), "-n", ns, "replace", "-f", path)
		wantLabels(t, kc, ns, "pod", "r", map[string]string{"app": "e2e", "version": "2"})

		// A replace that carries a stale resourceVersion is a 409.
		var p corev1.Pod
		if err := json.Unmarshal([]byte(mustKubectl(t, kc, "", "-n", ns, "get", "pod", "r", "-o", "json")), &p); err != nil {
			t.Fatal(err)
		}
		p.Labels["version"] = "3"
		current, _ := json.Marshal(p)
		stale := writeFile(t, "stale.json", string(current))
		wantKubectl(t, kc, "", ok("pod/r replaced"), "-n", ns, "replace", "-f", stale)
		wantKubectl(t, kc, "", failed(`Error from server (Conflict): error when replacing "`+stale+`": Operation cannot be fulfilled on pods "r": the object has been modified; please apply your changes to the latest version and try again`),
			"-n", ns, "replace", "-f", stale)
		wantLabels(t, kc, ns, "pod", "r", map[string]string{"app": "e2e", "version": "3"})
	})

	t.Run("patch", func(t *testing.T) {
		ns := newNamespace(t, kc)
		mustKubectl(t, kc, twoContainerPodYAML("p"), "-n", ns, "create", "-f", "-")
		tests := []struct {
			name       string
			typ        []string // nil: kubectl's default, strategic
			patch      string
			wantImages string
			wantLabels map[string]string
		}{
			// Strategic merge merges containers by name: a keeps its image.
			{"strategic (default)", nil,
				`{"metadata":{"labels":{"s":"1"}},"spec":{"containers":[{"name":"b","image":"example.com/b:2"}]}}`,
				"example.com/a:1 example.com/b:2", map[string]string{"app": "e2e", "s": "1"}},
			{"strategic", []string{"--type", "strategic"},
				`{"spec":{"containers":[{"name":"a","image":"example.com/a:2"}]}}`,
				"example.com/a:2 example.com/b:2", map[string]string{"app": "e2e", "s": "1"}},
			// JSON merge patch: null deletes.
			{"merge", []string{"--type", "merge"},
				`{"metadata":{"labels":{"s":null,"m":"1"}}}`,
				"example.com/a:2 example.com/b:2", map[string]string{"app": "e2e", "m": "1"}},
			{"json", []string{"--type", "json"},
				`[{"op":"replace","path":"/spec/containers/0/image","value":"example.com/a:3"},{"op":"add","path":"/metadata/labels/j","value":"1"}]`,
				"example.com/a:3 example.com/b:2", map[string]string{"app": "e2e", "m": "1", "j": "1"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				args := append([]string{"-n", ns, "patch", "pod", "p", "-p", tt.patch}, tt.typ...)
				wantKubectl(t, kc, "", ok("pod/p patched"), args...)
				if got := jsonpath(t, kc, ns, "pod", "p", "{.spec.containers[*].image}"); got != tt.wantImages {
					t.Errorf("images %q, want %q", got, tt.wantImages)
				}
				wantLabels(t, kc, ns, "pod", "p", tt.wantLabels)
			})
		}
		t.Run("json patch test op fails", func(t *testing.T) {
			rv := jsonpath(t, kc, ns, "pod", "p", "{.metadata.resourceVersion}")
			// A 422 (kube-apiserver words it "the server rejected our request
			// due to an error in our request"; dnsplane names the failed test).
			out, errOut, code := kubectl(t, kc, "", "-n", ns, "patch", "pod", "p", "--type", "json",
				"-p", `[{"op":"test","path":"/metadata/labels/m","value":"2"},{"op":"remove","path":"/metadata/labels/m"}]`)
			if code != 1 || out != "" || !strings.HasPrefix(errOut, "The request is invalid") {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and \"The request is invalid…\"", code, out, errOut)
			}
			if got := jsonpath(t, kc, ns, "pod", "p", "{.metadata.resourceVersion}"); got != rv {
				t.Errorf("a failed patch moved resourceVersion %s to %s", rv, got)
			}
		})
		t.Run("no-op patch", func(t *testing.T) {
			rv := jsonpath(t, kc, ns, "pod", "p", "{.metadata.resourceVersion}")
			wantKubectl(t, kc, "", ok("pod/p patched (no change)"), "-n", ns, "patch", "pod", "p", "--type", "merge",
				"-p", `{"metadata":{"labels":{"m":"1"}}}`)
			if got := jsonpath(t, kc, ns, "pod", "p", "{.metadata.resourceVersion}"); got != rv {
				t.Errorf("a no-op patch moved resourceVersion %s to %s", rv, got)
			}
		})
	})

	t.Run("label and annotate", func(t *testing.T) {
		ns := newNamespace(t, kc)
		mustKubectl(t, kc, podYAML("l", "1"), "-n", ns, "create", "-f", "-")
		wantKubectl(t, kc, "", ok("pod/l labeled"), "-n", ns, "label", "pod", "l", "tier=web")
		wantKubectl(t, kc, "", ok("pod/l annotated"), "-n", ns, "annotate", "pod", "l", "note=hello")
		wantLabels(t, kc, ns, "pod", "l", map[string]string{"app": "e2e", "version": "1", "tier": "web"})
		if got := jsonpath(t, kc, ns, "pod", "l", "{.metadata.annotations.note}"); got != "hello" {
			t.Errorf("annotation note = %q, want hello", got)
		}
		// An existing label needs --overwrite; removing one is "unlabeled".
		_, errOut, code := kubectl(t, kc, "", "-n", ns, "label", "pod", "l", "tier=db")
		if code != 1 || !strings.Contains(errOut, "'tier' already has a value (web), and --overwrite is false") {
			t.Errorf("label without --overwrite: exit %d, stderr %q", code, errOut)
		}
		wantKubectl(t, kc, "", ok("pod/l labeled"), "-n", ns, "label", "pod", "l", "tier=db", "--overwrite")
		wantKubectl(t, kc, "", ok("pod/l unlabeled"), "-n", ns, "label", "pod", "l", "tier-")
		wantKubectl(t, kc, "", ok("pod/l annotated"), "-n", ns, "annotate", "pod", "l", "note-")
		wantLabels(t, kc, ns, "pod", "l", map[string]string{"app": "e2e", "version": "1"})
	})

	t.Run("describe", func(t *testing.T) {
		ns := newNamespace(t, kc)
		mustKubectl(t, kc, podYAML("d", "1"), "-n", ns, "create", "-f", "-")
		out := mustKubectl(t, kc, "", "-n", ns, "describe", "pod", "d")
		for _, re := range []string{`(?m)^Name:\s+d$`, `(?m)^Namespace:\s+` + ns + `$`, `(?m)^Status:\s+Pending$`,
			`(?m)^Labels:\s+app=e2e$`, `(?m)^Containers:$`, `(?m)^\s+Image:\s+example.com/main:1$`} {
			if !regexp.MustCompile(re).MatchString(out) {
				t.Errorf("kubectl describe pod d does not match %s:\n%s", re, out)
			}
		}
	})

	t.Run("delete", func(t *testing.T) {
		ns := newNamespace(t, kc)
		mustKubectl(t, kc, podYAML("x", "1"), "-n", ns, "create", "-f", "-")
		path := writeFile(t, "pod.yaml", podYAML("f", "1"))
		mustKubectl(t, kc, "", "-n", ns, "create", "-f", path)
		// kubectl delete waits (--wait=true) until the object is gone.
		wantKubectl(t, kc, "", ok(`pod "x" deleted`), "-n", ns, "delete", "pod", "x")
		wantKubectl(t, kc, "", failed(`Error from server (NotFound): pods "x" not found`), "-n", ns, "get", "pod", "x")
		wantKubectl(t, kc, "", ok(`pod "f" deleted`), "-n", ns, "delete", "-f", path)
		wantKubectl(t, kc, "", failed(`Error from server (NotFound): error when deleting "`+path+`": pods "f" not found`),
			"-n", ns, "delete", "-f", path)
		wantKubectl(t, kc, "", run{stderr: "No resources found in " + ns + " namespace.\n"}, "-n", ns, "get", "pods")
		// Deleting the namespace deletes what is in it: it is Terminating
		// until the namespace controller has emptied it, kubectl waits for
		// it to go, and a namespace of the same name created afterwards is
		// empty. (kubectl itself reports a missing namespace when a get in
		// it is NotFound.)
		mustKubectl(t, kc, podYAML("z", "1"), "-n", ns, "create", "-f", "-")
		wantKubectl(t, kc, "", ok(`namespace "`+ns+`" deleted`), "delete", "namespace", ns)
		wantKubectl(t, kc, "", failed(`Error from server (NotFound): namespaces "`+ns+`" not found`), "get", "namespace", ns)
		wantKubectl(t, kc, "", failed(`Error from server (NotFound): namespaces "`+ns+`" not found`), "-n", ns, "get", "pod", "z")
		mustKubectl(t, kc, "", "create", "namespace", ns)
		wantKubectl(t, kc, "", failed(`Error from server (NotFound): pods "z" not found`), "-n", ns, "get", "pod", "z")
	})

	t.Run("cascade", func(t *testing.T) {
		// kubectl delete --cascade: the API server leaves the owner with the
		// orphan or foregroundDeletion finalizer, the garbage collector of
		// `dnsplane apiserver` acts on it, and kubectl waits for the owner
		// to go, so what it did to the ReplicaSet is done when kubectl
		// returns.
		ns := newNamespace(t, kc)
		for _, tc := range []struct{ cascade, rsAfter string }{
			{"orphan", "kept, unowned"}, {"foreground", "deleted"}, {"background", "deleted later"},
		} {
			name := "web-" + tc.cascade
			mustKubectl(t, kc, deploymentYAML(name), "-n", ns, "create", "-f", "-")
			uid := jsonpath(t, kc, ns, "deployment", name, "{.metadata.uid}")
			mustKubectl(t, kc, ownedReplicaSetYAML(name, uid), "-n", ns, "create", "-f", "-")
			wantKubectl(t, kc, "", ok(`deployment.apps "`+name+`" deleted`), "-n", ns, "delete", "deployment", name, "--cascade="+tc.cascade)
			switch tc.cascade {
			case "orphan":
				wantKubectl(t, kc, "", run{}, "-n", ns, "get", "replicaset", name, "-o", "jsonpath={.metadata.ownerReferences}")
			case "foreground":
				wantKubectl(t, kc, "", failed(`Error from server (NotFound): replicasets.apps "`+name+`" not found`), "-n", ns, "get", "replicaset", name)
			default:
				err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
					_, _, code := kubectl(t, kc, "", "-n", ns, "get", "replicaset", name)
					return code == 1, nil
				})
				if err != nil {
					t.Errorf("--cascade=background: the ReplicaSet was not collected: %v", err)
				}
			}
		}
	})

	t.Run("server dry run", func(t *testing.T) {
		ns := newNamespace(t, kc)
		path := writeFile(t, "pod.yaml", podYAML("d", "1"))
		wantKubectl(t, kc, "", ok("pod/d created (server dry run)"), "-n", ns, "create", "-f", path, "--dry-run=server")
		wantKubectl(t, kc, "", failed(`Error from server (NotFound): pods "d" not found`), "-n", ns, "get", "pod", "d")
		mustKubectl(t, kc, "", "-n", ns, "create", "-f", path)
		rv := jsonpath(t, kc, ns, "pod", "d", "{.metadata.resourceVersion}")
		wantKubectl(t, kc, "", ok("pod/d labeled (server dry run)"), "-n", ns, "label", "pod", "d", "dry=run", "--dry-run=server")
		// (kubectl patch does not mark its output as a dry run.)
		wantKubectl(t, kc, "", ok("pod/d patched"), "-n", ns, "patch", "pod", "d", "--type", "merge",
			"-p", `{"metadata":{"labels":{"dry":"run"}}}`, "--dry-run=server")
		wantKubectl(t, kc, "", ok(`pod "d" deleted (server dry run)`), "-n", ns, "delete", "pod", "d", "--dry-run=server")
		wantLabels(t, kc, ns, "pod", "d", map[string]string{"app": "e2e", "version": "1"})
		if got := jsonpath(t, kc, ns, "pod", "d", "{.metadata.resourceVersion}"); got != rv {
			t.Errorf("dry runs moved resourceVersion %s to %s", rv, got)
		}
		// A dry run validates like the real thing.
		wantKubectl(t, kc, podYAML("d2", "1")+"  dnsPolicy: Bogus\n",
			failed(`The Pod "d2" is invalid: spec.dnsPolicy: Unsupported value: "Bogus": supported values: "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None", "Custom", "ClusterFirstWithAutopath"`),
			"-n", ns, "create", "-f", "-", "--dry-run=server")
		wantKubectl(t, kc, "", failed(`Error from server (AlreadyExists): error when creating "`+path+`": pods "d" already exists`),
			"-n", ns, "create", "-f", path, "--dry-run=server")
	})

	t.Run("get -w", func(t *testing.T) {
		tests := []struct {
			name   string
			args   []string
			header []string
			added  []string // the first line of the pod
			update []string // the line its update prints
			want   int      // rows with update's prefix once the update is seen
		}{
			{"--output-watch-events", []string{"--output-watch-events"},
				[]string{"EVENT", "NAME", "READY", "STATUS", "RESTARTS", "AGE"},
				[]string{"ADDED", "w", "0/1", "Pending", "0"}, []string{"MODIFIED", "w", "0/1", "Pending", "0"}, 1},
			{"plain", nil,
				[]string{"NAME", "READY", "STATUS", "RESTARTS", "AGE"},
				[]string{"w", "0/1", "Pending", "0"}, []string{"w", "0/1", "Pending", "0"}, 2},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				ns := newNamespace(t, kc)
				mustKubectl(t, kc, podYAML("w", "1"), "-n", ns, "create", "-f", "-")
				watch := startKubectlWatch(t, kc, append([]string{"-n", ns, "get", "pods", "-w"}, tt.args...)...)
				out, err := watch.out.waitFor(10*time.Second, watch.exited, func(s string) bool { return countRows(s, tt.added) >= 1 })
				if err != nil {
					t.Fatalf("kubectl get -w: no line for the pod: %v\nstdout:\n%s\nstderr:\n%s", err, out, watch.err.String())
				}
				if r := rows(out); !slices.Equal(r[0], tt.header) {
					t.Errorf("header %q, want %q", r[0], tt.header)
				}
				wantKubectl(t, kc, "", ok("pod/w labeled"), "-n", ns, "label", "pod", "w", "step=2")
				out, err = watch.out.waitFor(10*time.Second, watch.exited, func(s string) bool { return countRows(s, tt.update) >= tt.want })
				if err != nil {
					t.Fatalf("kubectl get -w did not show the update: %v\nstdout:\n%s\nstderr:\n%s", err, out, watch.err.String())
				}
			})
		}
	})

	t.Run("api-resources", func(t *testing.T) {
		out := mustKubectl(t, kc, "", "api-resources")
		if r := rows(out); !slices.Equal(r[0], []string{"NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"}) {
			t.Errorf("header %q", r[0])
		}
		for _, want := range [][]string{
			{"dnses", "operator.dnsplane.io/v1", "false", "DNS"},
			{"deployments", "deploy", "apps/v1", "true", "Deployment"},
			{"replicasets", "rs", "apps/v1", "true", "ReplicaSet"},
			{"jobs", "batch/v1", "true", "Job"},
			{"cronjobs", "cj", "batch/v1", "true", "CronJob"},
			{"pods", "po", "v1", "true", "Pod"},
			{"services", "svc", "v1", "true", "Service"},
			{"namespaces", "ns", "v1", "false", "Namespace"},
		} {
			if got := rowFor(out, want[0]); !slices.Equal(got, want) {
				t.Errorf("api-resources row %q, want %q", got, want)
			}
		}
		wantKubectl(t, kc, "", ok("dnses.operator.dnsplane.io"), "api-resources", "--api-group=operator.dnsplane.io", "-o", "name")
		wantKubectl(t, kc, "", run{stderr: "No resources found\n"}, "get", "dnses")
	})

	t.Run("tables of other kinds", func(t *testing.T) {
		ns := newNamespace(t, kc)
		wantKubectl(t, kc, "", ok("deployment.apps/web created"), "-n", ns, "create", "deployment", "web", "--image=example.com/web:1")
		wantTable(t, mustKubectl(t, kc, "", "-n", ns, "get", "deploy"),
			[]string{"NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"}, []string{"web", "0/1", "0", "0"})

		// Cluster-scoped kinds: unique names on the shared server, deleted
		// after; except DNS, a singleton whose only valid name is default.
		dns, node := "default", ns+"-node"
		wantKubectl(t, kc, "apiVersion: operator.dnsplane.io/v1\nkind: DNS\nmetadata:\n  name: "+ns+"-dns\n",
			run{exit: 1, stderr: `The DNS "` + ns + `-dns" is invalid: metadata.name: Invalid value: "` + ns + `-dns": must be "default": the DNS resource is a singleton` + "\n"}, "create", "-f", "-")
		wantKubectl(t, kc, "apiVersion: operator.dnsplane.io/v1\nkind: DNS\nmetadata:\n  name: "+dns+"\n",
			ok("dns.operator.dnsplane.io/"+dns+" created"), "create", "-f", "-")
		wantTable(t, mustKubectl(t, kc, "", "get", "dns", dns),
			[]string{"NAME", "CLUSTER-IP", "CLUSTER-DOMAIN", "AVAILABLE", "AGE"}, []string{dns, "<none>", "<none>", "Unknown"})
		wantKubectl(t, kc, "", ok(`dns.operator.dnsplane.io "`+dns+`" deleted`), "delete", "dns", dns)
		wantKubectl(t, kc, "apiVersion: v1\nkind: Node\nmetadata:\n  name: "+node+"\n", ok("node/"+node+" created"), "create", "-f", "-")
		wantTable(t, mustKubectl(t, kc, "", "get", "node", node),
			[]string{"NAME", "STATUS", "ROLES", "AGE", "VERSION"}, []string{node, "Unknown", "<none>"})
		wantKubectl(t, kc, "", ok(`node "`+node+`" deleted`), "delete", "node", node)
	})

	t.Run("request size limit", func(t *testing.T) {
		ns := newNamespace(t, kc)
		big := writeFile(t, "big.txt", strings.Repeat("a", 4<<20))
		wantKubectl(t, kc, "", failed("error: failed to create configmap: Request entity too large: limit is 3145728"),
			"-n", ns, "create", "configmap", "big", "--from-file="+big)
		wantKubectl(t, kc, "", failed(`Error from server (NotFound): configmaps "big" not found`), "-n", ns, "get", "configmap", "big")
		t.Run("object under the body limit but too large to store", func(t *testing.T) {
			mid := writeFile(t, "mid.txt", strings.Repeat("a", 3000000))
			_, errOut, code := kubectl(t, kc, "", "-n", ns, "create", "configmap", "mid", "--from-file="+mid)
			if code != 1 || strings.Contains(errOut, "Internal error") || strings.Contains(errOut, "rpc error") {
				t.Errorf("exit %d, stderr %q; want a 4xx refusal", code, errOut)
			}
		})
	})

	t.Run("create in a missing namespace", func(t *testing.T) {
		path := writeFile(t, "pod.yaml", podYAML("x", "1"))
		wantKubectl(t, kc, "", failed(`Error from server (NotFound): error when creating "`+path+`": namespaces "nope" not found`),
			"-n", "nope", "create", "-f", path)
	})

	t.Run("invalid pod DNS", func(t *testing.T) {
		ns := newNamespace(t, kc)
		pod := func(spec string) string {
			return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: bad\nspec:\n  containers:\n  - name: c\n    image: example.com/c:1\n" + spec
		}
		tests := []struct {
			name, manifest, want string
		}{
			{"unknown policy", pod("  dnsPolicy: Bogus\n"),
				`The Pod "bad" is invalid: spec.dnsPolicy: Unsupported value: "Bogus": supported values: "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None", "Custom", "ClusterFirstWithAutopath"`},
			{"None without dnsConfig", pod("  dnsPolicy: None\n"),
				"The Pod \"bad\" is invalid: spec.dnsConfig: Required value: must provide `dnsConfig` when `dnsPolicy` is None"},
			{"None without nameservers", pod("  dnsPolicy: None\n  dnsConfig:\n    searches: [example.com]\n"),
				"The Pod \"bad\" is invalid: spec.dnsConfig.nameservers: Required value: must provide at least one DNS nameserver when `dnsPolicy` is None"},
			{"nameserver not an IP", pod("  dnsPolicy: None\n  dnsConfig:\n    nameservers: [dns.example.com]\n"),
				`The Pod "bad" is invalid: spec.dnsConfig.nameservers[0]: Invalid value: "dns.example.com": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)`},
			{"dnsParams without Custom", pod("  dnsParams:\n    custom:\n      search: [example.com]\n"),
				"The Pod \"bad\" is invalid: spec.dnsParams: Forbidden: may only be set when `dnsPolicy` is Custom"},
			{"Custom without dnsParams", pod("  dnsPolicy: Custom\n"),
				"The Pod \"bad\" is invalid: spec.dnsParams: Required value: must be set when `dnsPolicy` is Custom"},
			{"substitution inside a label", pod("  dnsPolicy: Custom\n  dnsParams:\n    custom:\n      search: [abc$(NAMESPACE)1234.example.com]\n"),
				`The Pod "bad" is invalid: spec.dnsParams.custom.search[0]: Invalid value: "abc$(NAMESPACE)1234.example.com": substitution "$(NAMESPACE)" must be a whole DNS label, not part of the label "abc$(NAMESPACE)1234"`},
			{"unknown substitution", pod("  dnsPolicy: Custom\n  dnsParams:\n    custom:\n      search: [$(POD).example.com]\n"),
				`The Pod "bad" is invalid: spec.dnsParams.custom.search[0]: Invalid value: "$(POD).example.com": unknown substitution "$(POD)": valid substitutions are "$(NAMESPACE)", "$(CLUSTER)", "$(HOST)"`},
			{"deployment template", `apiVersion: apps/v1
kind: Deployment
metadata:
  name: bad
spec:
  selector: {matchLabels: {app: bad}}
  template:
    metadata: {labels: {app: bad}}
    spec:
      containers: [{name: c, image: example.com/c:1}]
      dnsPolicy: Bogus
`, `The Deployment "bad" is invalid: spec.template.spec.dnsPolicy: Unsupported value: "Bogus": supported values: "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None", "Custom", "ClusterFirstWithAutopath"`},
			{"cronjob template", `apiVersion: batch/v1
kind: CronJob
metadata:
  name: bad
spec:
  schedule: "*/5 * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: c, image: example.com/c:1}]
          dnsPolicy: None
`, "The CronJob \"bad\" is invalid: spec.jobTemplate.spec.template.spec.dnsConfig: Required value: must provide `dnsConfig` when `dnsPolicy` is None"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				wantKubectl(t, kc, tt.manifest, failed(tt.want), "-n", ns, "create", "-f", "-")
			})
		}
		// Nothing was written.
		wantKubectl(t, kc, "", failed(`Error from server (NotFound): pods "bad" not found`), "-n", ns, "get", "pod", "bad")
	})

	t.Run("services", func(t *testing.T) {
		ns := newNamespace(t, kc)
		_, serviceRange, _ := net.ParseCIDR("10.96.0.0/12")
		wantKubectl(t, kc, "", ok("service/s created"), "-n", ns, "create", "service", "clusterip", "s", "--tcp=80:8080")
		ip := jsonpath(t, kc, ns, "svc", "s", "{.spec.clusterIP}")
		if parsed := net.ParseIP(ip); parsed == nil || !serviceRange.Contains(parsed) || ip == "10.96.0.1" {
			t.Errorf("clusterIP %q, want a free address in 10.96.0.0/12", ip)
		}
		header := []string{"NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"}
		wantTable(t, mustKubectl(t, kc, "", "-n", ns, "get", "svc", "s"), header, []string{"s", "ClusterIP", ip, "<none>", "80/TCP"})
		wantTable(t, mustKubectl(t, kc, "", "-n", "default", "get", "svc", "kubernetes"), header,
			[]string{"kubernetes", "ClusterIP", "10.96.0.1", "<none>", "443/TCP"})
		wantKubectl(t, kc, "", ok("service/h created"), "-n", ns, "create", "service", "clusterip", "h", "--clusterip=None")
		if got := jsonpath(t, kc, ns, "svc", "h", "{.spec.clusterIP}"); got != "None" {
			t.Errorf("headless service: clusterIP %q, want None", got)
		}
		wantKubectl(t, kc, "", ok("service/e created"), "-n", ns, "create", "service", "externalname", "e", "--external-name=example.com")
		if got := jsonpath(t, kc, ns, "svc", "e", "{.spec.type} {.spec.clusterIP}"); got != "ExternalName " {
			t.Errorf("ExternalName service: type and clusterIP %q, want \"ExternalName \"", got)
		}
		// An address in use cannot be requested again.
		_, errOut, code := kubectl(t, kc, "", "-n", ns, "create", "service", "clusterip", "dup", "--tcp=80", "--clusterip="+ip)
		if code != 1 || !strings.Contains(errOut, "failed to allocate IP "+ip+": provided IP is already allocated") {
			t.Errorf("requesting %s again: exit %d, stderr %q", ip, code, errOut)
		}
		t.Run("upstream wording", func(t *testing.T) {
			wantKubectl(t, kc, "", failed(`error: failed to create ClusterIP service: Service "dup" is invalid: spec.clusterIPs: Invalid value: ["`+ip+`"]: failed to allocate IP `+ip+`: provided IP is already allocated`),
				"-n", ns, "create", "service", "clusterip", "dup", "--tcp=80", "--clusterip="+ip)
		})
	})

	t.Run("discovery and raw", func(t *testing.T) {
		var versions metav1.APIVersions
		out := mustKubectl(t, kc, "", "get", "--raw", "/api")
		if err := json.Unmarshal([]byte(out), &versions); err != nil || versions.Kind != "APIVersions" || !slices.Equal(versions.Versions, []string{"v1"}) {
			t.Errorf("kubectl get --raw /api: %s (%v)", out, err)
		}
		wantKubectl(t, kc, "", run{stdout: "ok"}, "get", "--raw", "/readyz")
	})

	t.Run("authentication", func(t *testing.T) {
		// A bearer token the server does not know. With discovery cached
		// (kubectl has talked to this server before) the request itself gets
		// the 401; with a cold cache the discovery request does, and kubectl
		// words it differently.
		bogus := kubeconfigWithUser(t, kc, &clientcmdapi.AuthInfo{Token: "not-a-valid-token"})
		mustKubectl(t, kc, "", "api-resources")
		wantKubectl(t, bogus, "", failed("error: You must be logged in to the server (Unauthorized)"), "get", "pods")
		_, errOut, code := kubectl(t, bogus, "", "--cache-dir", t.TempDir(), "get", "pods")
		if want := "error: You must be logged in to the server (the server has asked for the client to provide credentials)\n"; code != 1 || !strings.HasSuffix(errOut, want) {
			t.Errorf("bad token, cold discovery cache: exit %d, stderr %q; want exit 1 and the last line %q", code, errOut, want)
		}

		// A client certificate signed by the server's CA: the user is the
		// common name, the groups the organizations.
		ca := loadCA(t, sharedServer(t).DataDir)
		user := newCert(t, &ca, "e2e-user", "system:masters")
		certs := kubeconfigWithUser(t, kc, &clientcmdapi.AuthInfo{ClientCertificateData: user.CertPEM, ClientKeyData: user.KeyPEM})
		wantKubectl(t, certs, "", ok("namespace/default"), "get", "namespace", "default", "-o", "name")
		// A certificate of another CA is no credential.
		other := newCert(t, nil, "other-ca")
		stranger := newCert(t, &other, "e2e-user", "system:masters")
		foreign := kubeconfigWithUser(t, kc, &clientcmdapi.AuthInfo{ClientCertificateData: stranger.CertPEM, ClientKeyData: stranger.KeyPEM})
		out, errOut, code := kubectl(t, foreign, "", "get", "namespace", "default", "-o", "name")
		if code != 1 || out != "" {
			t.Errorf("a certificate of another CA: exit %d, stdout %q, stderr %q", code, out, errOut)
		}
		t.Run("certificate of another CA is a 401", func(t *testing.T) {
			wantKubectl(t, foreign, "", failed("error: You must be logged in to the server (Unauthorized)"), "get", "namespace", "default", "-o", "name")
		})

		// No credentials at all. kubectl itself would prompt for a user name
		// (and fail on EOF) with such a kubeconfig, so send the request with
		// client-go's transport: the server's CA, no Authorization header.
		rc := restConfig(t, kc)
		rc.BearerToken = ""
		client, err := rest.HTTPClientFor(rc)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := client.Get(rc.Host + "/api/v1/namespaces/default/pods")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var status metav1.Status
		if resp.StatusCode != http.StatusUnauthorized || json.Unmarshal(body, &status) != nil ||
			status.Kind != "Status" || status.Reason != metav1.StatusReasonUnauthorized || status.Code != 401 || status.Message != "Unauthorized" {
			t.Errorf("anonymous GET: %d %s; want 401 and a Status with reason Unauthorized", resp.StatusCode, body)
		}
		// The public endpoints answer anyone.
		for _, path := range []string{"/version", "/healthz", "/livez", "/readyz"} {
			resp, err = client.Get(rc.Host + path)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("anonymous GET %s: %d, want 200", path, resp.StatusCode)
			}
		}
	})
}

// wantTable requires kubectl's table output to be the header and one row
// that starts with the given cells (the rest, like AGE, varies).
func wantTable(t *testing.T, out string, header, row []string) {
	t.Helper()
	r := rows(out)
	if len(r) != 2 || !slices.Equal(r[0], header) || len(r[1]) < len(row) || !slices.Equal(r[1][:len(row)], row) {
		t.Errorf("table:\n%s\nwant the header %q and a row starting %q", out, header, row)
	}
}

// kubectlWatch is a background `kubectl get -w`.
type kubectlWatch struct {
	out, err *outputBuffer
	exited   chan struct{}
}

// startKubectlWatch runs kubectl in the background until the test ends.
func startKubectlWatch(t *testing.T, kc string, args ...string) *kubectlWatch {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := kubectlCommand(ctx, kc, args...)
	w := &kubectlWatch{out: newOutputBuffer(), err: newOutputBuffer(), exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = w.out, w.err
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("kubectl %s: %v", strings.Join(args, " "), err)
	}
	go func() {
		_ = cmd.Wait()
		close(w.exited)
	}()
	t.Cleanup(func() {
		cancel()
		<-w.exited
	})
	return w
}

// countRows counts the output lines that start with the fields prefix.
func countRows(out string, prefix []string) int {
	n := 0
	for _, r := range rows(out) {
		if len(r) >= len(prefix) && slices.Equal(r[:len(prefix)], prefix) {
			n++
		}
	}
	return n
}
