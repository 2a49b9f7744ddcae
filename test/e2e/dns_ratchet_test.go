package e2e

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// strictSearch is the upstream message for a search entry that fails strict
// (RFC 1123) validation.
const strictSearch = `a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', ` +
	`and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is ` +
	`'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`

var (
	// relaxedSearches are KEP-4427's examples: valid only with relaxed validation.
	relaxedSearches = []string{"_sip._tcp.abc_d.example.com", "."}
	// plainSearches pass strict validation.
	plainSearches = []string{"ns1.svc.cluster.local", "example.com"}
)

// invalidMessage is what kubectl prints for a 422 with these field errors.
func invalidMessage(kind, name string, causes ...string) string {
	if len(causes) == 1 {
		return fmt.Sprintf("The %s %q is invalid: %s", kind, name, causes[0])
	}
	return fmt.Sprintf("The %s %q is invalid: \n* %s", kind, name, strings.Join(causes, "\n* "))
}

// podCarrier is a kind that holds a pod spec, as kubectl names it.
type podCarrier struct {
	kind     string // in error messages: "Deployment"
	resource string // on kubectl's command line and in NotFound: "deployments.apps"
	printed  string // kubectl's prefix of "… created": "deployment.apps"
	spec     string // field path of the pod spec: "spec.template.spec"
	pointer  string // JSON pointer of the pod spec: "/spec/template/spec"
	header   string // the manifest up to the pod spec, %[1]s is the name
	indent   int    // of the pod spec in the manifest
	restart  string // restartPolicy the kind needs ("" = default)
	// immutable is set for the kinds whose pod spec upstream does not let
	// an update change (a Pod's beyond images and a few fields, a Job's
	// template): kube-apiserver refuses a new search list whatever it holds.
	immutable bool
	// refused is the start of that refusal, after `The <Kind> "<name>" is
	// invalid: `.
	refused string
}

// manifest is a valid object of the kind with dnsPolicy None, nameserver
// 1.2.3.4 and the given search list.
func (c podCarrier) manifest(name string, searches []string) string {
	s, _ := json.Marshal(searches)
	spec := "containers:\n- name: main\n  image: example.com/main:1\n"
	if c.restart != "" {
		spec += "restartPolicy: " + c.restart + "\n"
	}
	spec += "dnsPolicy: None\ndnsConfig:\n  nameservers: [\"1.2.3.4\"]\n  searches: " + string(s) + "\n"
	pad := strings.Repeat(" ", c.indent)
	var b strings.Builder
	fmt.Fprintf(&b, c.header, name)
	for _, line := range strings.SplitAfter(strings.TrimSuffix(spec, "\n"), "\n") {
		b.WriteString(pad + line)
	}
	return b.String() + "\n"
}

// searchError is the field error of one entry that fails strict validation.
func (c podCarrier) searchError(i int, value string) string {
	return fmt.Sprintf("%s.dnsConfig.searches[%d]: Invalid value: %q: %s", c.spec, i, value, strictSearch)
}

// relaxedErrors are the errors KEP-4427's list gets under strict validation
// (the "." is checked without its trailing dot, as upstream).
func (c podCarrier) relaxedErrors() []string {
	return []string{c.searchError(0, "_sip._tcp.abc_d.example.com"), c.searchError(1, "")}
}

var podCarriers = []podCarrier{
	{kind: "Pod", resource: "pods", printed: "pod", spec: "spec", pointer: "/spec", indent: 2,
		header:    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: %[1]s\nspec:\n",
		immutable: true, refused: "spec: Forbidden: pod updates may not change fields other than "},
	{kind: "PodTemplate", resource: "podtemplates", printed: "podtemplate", spec: "template.spec", pointer: "/template/spec", indent: 4,
		header: "apiVersion: v1\nkind: PodTemplate\nmetadata:\n  name: %[1]s\ntemplate:\n  spec:\n"},
	{kind: "Deployment", resource: "deployments.apps", printed: "deployment.apps", spec: "spec.template.spec", pointer: "/spec/template/spec", indent: 6,
		header: "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: %[1]s\nspec:\n  selector:\n    matchLabels:\n      app: %[1]s\n" +
			"  template:\n    metadata:\n      labels:\n        app: %[1]s\n    spec:\n"},
	{kind: "ReplicaSet", resource: "replicasets.apps", printed: "replicaset.apps", spec: "spec.template.spec", pointer: "/spec/template/spec", indent: 6,
		header: "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata:\n  name: %[1]s\nspec:\n  selector:\n    matchLabels:\n      app: %[1]s\n" +
			"  template:\n    metadata:\n      labels:\n        app: %[1]s\n    spec:\n"},
	{kind: "Job", resource: "jobs.batch", printed: "job.batch", spec: "spec.template.spec", pointer: "/spec/template/spec", indent: 6, restart: "Never",
		header:    "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: %[1]s\nspec:\n  template:\n    spec:\n",
		immutable: true, refused: "spec.template: Invalid value: "},
	{kind: "CronJob", resource: "cronjobs.batch", printed: "cronjob.batch", spec: "spec.jobTemplate.spec.template.spec",
		pointer: "/spec/jobTemplate/spec/template/spec", indent: 10, restart: "Never",
		header: "apiVersion: batch/v1\nkind: CronJob\nmetadata:\n  name: %[1]s\nspec:\n  schedule: \"0 0 * * *\"\n  jobTemplate:\n    spec:\n" +
			"      template:\n        spec:\n"},
}

// wantRefused runs kubectl and requires the refusal of an update: exit 1,
// nothing on stdout, and on stderr kubectl's line for a 422 of kind and
// name starting with cause. (Upstream's message for an immutable pod spec
// ends with a dump or a diff of it, not worth spelling out here.)
func wantRefused(t *testing.T, kubeconfig, kind, name, cause string, args ...string) {
	t.Helper()
	out, errOut, code := kubectl(t, kubeconfig, "", args...)
	if prefix := fmt.Sprintf("The %s %q is invalid: %s", kind, name, cause); code != 1 || out != "" || !strings.HasPrefix(errOut, prefix) {
		t.Errorf("kubectl %s:\ngot  exit %d\nstdout: %q\nstderr: %q\nwant exit 1, stderr starting %q",
			strings.Join(args, " "), code, out, errOut, prefix)
	}
}

// searchesOf is the stored search list of one object.
func searchesOf(t *testing.T, kc, ns string, c podCarrier, name string) []string {
	t.Helper()
	out := jsonpath(t, kc, ns, c.resource, name, "{"+strings.ReplaceAll(c.pointer, "/", ".")+".dnsConfig.searches}")
	var got []string
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("searches of %s/%s: %q: %v", c.resource, name, out, err)
	}
	return got
}

func wantSearches(t *testing.T, kc, ns string, c podCarrier, name string, want []string) {
	t.Helper()
	if got := searchesOf(t, kc, ns, c, name); !slices.Equal(got, want) {
		t.Errorf("%s/%s searches %q, want %q", c.resource, name, got, want)
	}
}

// setSearches is a JSON patch replacing the search list.
func (c podCarrier) setSearches(searches []string) string {
	s, _ := json.Marshal(searches)
	return fmt.Sprintf(`[{"op":"replace","path":"%s/dnsConfig/searches","value":%s}]`, c.pointer, s)
}

// TestRelaxedDNSRatchetAcrossRestart runs KEP-4427's ratcheting
// plan through kubectl for a Pod and the kinds with a pod template it names,
// plus PodTemplate and CronJob, with a real restart of the server over the
// same data dir in between: objects written with the
// RelaxedDNSSearchValidation gate on stay updatable with it off until their
// last relaxed value is gone.
//
// Upstream forbids changing a Pod's dnsConfig (pod spec updates are limited)
// and a Job's template, and so does dnsplane: for those two the plan checks
// creates, updates that leave the pod spec alone, and that a new search
// list is refused; PodTemplate and CronJob run the whole plan for their
// API groups.
func TestRelaxedDNSRatchetAcrossRestart(t *testing.T) {
	requireKubectl(t)
	srv := startServer(t, t.TempDir())
	kc := srv.Kubeconfig
	ns := newNamespace(t, kc)
	grown := append(slices.Clone(plainSearches), "_ldap._tcp.example.com")
	dotted := []string{".", "example.com"}
	uids := map[string]string{} // of each kind's "relaxed" object, before the restart

	// Gate on (the default).
	for _, c := range podCarriers {
		t.Run("gate on/"+c.kind, func(t *testing.T) {
			// New value with '_' and '.', new value without.
			wantKubectl(t, kc, c.manifest("relaxed", relaxedSearches), ok(c.printed+"/relaxed created"), "-n", ns, "create", "-f", "-")
			wantKubectl(t, kc, c.manifest("plain", plainSearches), ok(c.printed+"/plain created"), "-n", ns, "create", "-f", "-")
			wantKubectl(t, kc, c.manifest("dotted", dotted), ok(c.printed+"/dotted created"), "-n", ns, "create", "-f", "-")
			// Existing object, new value with '_'.
			wantKubectl(t, kc, c.manifest("grown", plainSearches), ok(c.printed+"/grown created"), "-n", ns, "create", "-f", "-")
			wantSearches(t, kc, ns, c, "relaxed", relaxedSearches)
			if c.immutable {
				wantRefused(t, kc, c.kind, "grown", c.refused, "-n", ns, "patch", c.resource, "grown", "--type", "json", "-p", c.setSearches(grown))
				wantSearches(t, kc, ns, c, "grown", plainSearches)
			} else {
				wantKubectl(t, kc, "", ok(c.printed+"/grown patched"), "-n", ns, "patch", c.resource, "grown", "--type", "json", "-p", c.setSearches(grown))
				wantSearches(t, kc, ns, c, "grown", grown)
			}
			uids[c.kind] = jsonpath(t, kc, ns, c.resource, "relaxed", "{.metadata.uid}")
		})
	}

	// dnsParams.custom.search follows the same rules (docs/pod-dns.md), on a
	// PodTemplate (whose pod spec may change) and a Pod (whose dnsParams may
	// not, like the rest of its spec).
	customSpec := func(indent string, search ...string) string {
		s, _ := json.Marshal(search)
		return indent + "containers:\n" + indent + "- name: main\n" + indent + "  image: example.com/main:1\n" +
			indent + "dnsPolicy: Custom\n" + indent + "dnsParams:\n" + indent + "  custom:\n" + indent + "    search: " + string(s) + "\n"
	}
	customTemplate := func(name string, search ...string) string {
		return "apiVersion: v1\nkind: PodTemplate\nmetadata:\n  name: " + name + "\ntemplate:\n  spec:\n" + customSpec("    ", search...)
	}
	customPod := func(name string, search ...string) string {
		return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\nspec:\n" + customSpec("  ", search...)
	}
	t.Run("gate on/Custom search", func(t *testing.T) {
		wantKubectl(t, kc, customTemplate("custom", "$(NAMESPACE).svc.$(CLUSTER)", "abc_d.example.com", "$(HOST)"), ok("podtemplate/custom created"),
			"-n", ns, "create", "-f", "-")
		wantKubectl(t, kc, customPod("custom", "$(NAMESPACE).svc.$(CLUSTER)", "abc_d.example.com", "$(HOST)"), ok("pod/custom created"),
			"-n", ns, "create", "-f", "-")
	})

	srv.restart(t, "--feature-gates=RelaxedDNSSearchValidation=false")

	t.Run("gate off/Custom search", func(t *testing.T) {
		customError := func(kind, name, spec string) run {
			return failed(invalidMessage(kind, name, fmt.Sprintf(`%s.dnsParams.custom.search[1]: Invalid value: "abc_d.example.com": %s`, spec, strictSearch)))
		}
		wantKubectl(t, kc, customTemplate("custom2", "$(NAMESPACE).svc.$(CLUSTER)", "abc_d.example.com", "$(HOST)"), customError("PodTemplate", "custom2", "template.spec"),
			"-n", ns, "create", "-f", "-")
		wantKubectl(t, kc, customPod("custom2", "$(NAMESPACE).svc.$(CLUSTER)", "abc_d.example.com", "$(HOST)"), customError("Pod", "custom2", "spec"),
			"-n", ns, "create", "-f", "-")
		wantKubectl(t, kc, "", ok("podtemplate/custom labeled"), "-n", ns, "label", "podtemplate", "custom", "ratchet=on")
		wantKubectl(t, kc, "", ok("pod/custom labeled"), "-n", ns, "label", "pod", "custom", "ratchet=on")
		wantKubectl(t, kc, "", ok("podtemplate/custom patched"), "-n", ns, "patch", "podtemplate", "custom", "--type", "json",
			"-p", `[{"op":"replace","path":"/template/spec/dnsParams/custom/search","value":["$(NAMESPACE).svc.$(CLUSTER)","example.com"]}]`)
		wantKubectl(t, kc, "", customError("PodTemplate", "custom", "template.spec"), "-n", ns, "patch", "podtemplate", "custom", "--type", "json",
			"-p", `[{"op":"replace","path":"/template/spec/dnsParams/custom/search","value":["$(NAMESPACE).svc.$(CLUSTER)","abc_d.example.com"]}]`)
		wantKubectl(t, kc, "", failed(invalidMessage("Pod", "custom", "spec.dnsParams: Forbidden: pod updates may not change spec.dnsParams")),
			"-n", ns, "patch", "pod", "custom", "--type", "json",
			"-p", `[{"op":"replace","path":"/spec/dnsParams/custom/search","value":["$(NAMESPACE).svc.$(CLUSTER)","example.com"]}]`)
	})

	for _, c := range podCarriers {
		t.Run("gate off/"+c.kind, func(t *testing.T) {
			// New objects are validated strictly; nothing is written.
			wantKubectl(t, kc, c.manifest("relaxed2", relaxedSearches), failed(invalidMessage(c.kind, "relaxed2", c.relaxedErrors()...)),
				"-n", ns, "create", "-f", "-")
			wantKubectl(t, kc, "", failed(fmt.Sprintf(`Error from server (NotFound): %s "relaxed2" not found`, c.resource)),
				"-n", ns, "get", c.resource, "relaxed2")
			wantKubectl(t, kc, c.manifest("plain2", plainSearches), ok(c.printed+"/plain2 created"), "-n", ns, "create", "-f", "-")

			// The objects came back from the data dir as they were.
			if uid := jsonpath(t, kc, ns, c.resource, "relaxed", "{.metadata.uid}"); uid != uids[c.kind] {
				t.Errorf("uid %q after the restart, %q before", uid, uids[c.kind])
			}

			// Existing objects with '_' or '.': an unrelated change passes,
			// and so does a search list that keeps a relaxed value.
			wantKubectl(t, kc, "", ok(c.printed+"/relaxed labeled"), "-n", ns, "label", c.resource, "relaxed", "ratchet=on")
			wantSearches(t, kc, ns, c, "relaxed", relaxedSearches)
			wantKubectl(t, kc, "", ok(c.printed+"/grown labeled"), "-n", ns, "label", c.resource, "grown", "ratchet=on")
			withLDAP := append(slices.Clone(relaxedSearches), "_ldap._tcp.example.com")
			if c.immutable {
				wantRefused(t, kc, c.kind, "relaxed", c.refused, "-n", ns, "patch", c.resource, "relaxed", "--type", "json", "-p", c.setSearches(withLDAP))
				wantSearches(t, kc, ns, c, "relaxed", relaxedSearches)
				wantKubectl(t, kc, "", ok(c.printed+"/plain labeled"), "-n", ns, "label", c.resource, "plain", "ratchet=off")
				return
			}
			wantKubectl(t, kc, "", ok(c.printed+"/relaxed patched"), "-n", ns, "patch", c.resource, "relaxed", "--type", "json", "-p", c.setSearches(withLDAP))
			wantSearches(t, kc, ns, c, "relaxed", withLDAP)
			// One '.' relaxes the whole list of its object (KEP-4427 as written).
			dottedUnderscore := append(slices.Clone(dotted), "_x.example.com")
			wantKubectl(t, kc, "", ok(c.printed+"/dotted patched"), "-n", ns, "patch", c.resource, "dotted", "--type", "json", "-p", c.setSearches(dottedUnderscore))

			// Remove the relaxed values (replace with the plain manifest):
			// passes; adding them back is then rejected.
			path := writeFile(t, "plain.yaml", c.manifest("relaxed", plainSearches))
			wantKubectl(t, kc, "", ok(c.printed+"/relaxed replaced"), "-n", ns, "replace", "-f", path)
			wantSearches(t, kc, ns, c, "relaxed", plainSearches)
			wantKubectl(t, kc, "", failed(invalidMessage(c.kind, "relaxed", c.relaxedErrors()...)),
				"-n", ns, "patch", c.resource, "relaxed", "--type", "json", "-p", c.setSearches(relaxedSearches))
			wantKubectl(t, kc, "", failed(invalidMessage(c.kind, "relaxed", c.searchError(2, "_ldap._tcp.example.com"))),
				"-n", ns, "patch", c.resource, "relaxed", "--type", "json", "-p", c.setSearches(grown))
			wantSearches(t, kc, ns, c, "relaxed", plainSearches)

			// An object that never had one cannot get one.
			wantKubectl(t, kc, "", failed(invalidMessage(c.kind, "plain", c.searchError(2, "_ldap._tcp.example.com"))),
				"-n", ns, "patch", c.resource, "plain", "--type", "json", "-p", c.setSearches(grown))
			wantKubectl(t, kc, "", ok(c.printed+"/plain labeled"), "-n", ns, "label", c.resource, "plain", "ratchet=off")
		})
	}
}

// TestPolicyGateRatchetAcrossRestart checks the policy gates' ratchet across
// a real restart: a Pod and a Deployment created with dnsPolicy Custom (or
// ClusterFirstWithAutopath) while the gate was on stay updatable after the
// server restarts with the gate off; new objects, and objects switching to
// the policy, are rejected with the policy left out of the supported values.
// A Pod's spec cannot change after creation (upstream's rule), so the
// updates that change the pod spec run on the Deployment's template.
func TestPolicyGateRatchetAcrossRestart(t *testing.T) {
	requireKubectl(t)
	tests := []struct {
		policy, gate string
		extra        string // YAML under the pod spec the policy needs, without indentation
		switchTo     string // merge patch that switches a ClusterFirst template to the policy
		switchAway   string // JSON patch that switches back to ClusterFirst
		supported    string
	}{
		{policy: "Custom", gate: "PodDNSCustomPolicy",
			extra:      "dnsParams:\n  custom:\n    search: [$(NAMESPACE).svc.$(CLUSTER), my.dns.search.suffix, $(HOST)]\n    options: [\"ndots:2\"]\n",
			switchTo:   `{"spec":{"template":{"spec":{"dnsPolicy":"Custom","dnsParams":{"custom":{"search":["my.dns.search.suffix"]}}}}}}`,
			switchAway: `[{"op":"replace","path":"/spec/template/spec/dnsPolicy","value":"ClusterFirst"},{"op":"remove","path":"/spec/template/spec/dnsParams"}]`,
			supported:  `"ClusterFirstWithHostNet", "ClusterFirst", "Default", "None", "ClusterFirstWithAutopath"`},
		{policy: "ClusterFirstWithAutopath", gate: "PodDNSAutopath",
			switchTo:   `{"spec":{"template":{"spec":{"dnsPolicy":"ClusterFirstWithAutopath"}}}}`,
			switchAway: `[{"op":"replace","path":"/spec/template/spec/dnsPolicy","value":"ClusterFirst"}]`,
			supported:  `"ClusterFirstWithHostNet", "ClusterFirst", "Default", "None", "Custom"`},
	}
	for _, tt := range tests {
		t.Run(tt.policy, func(t *testing.T) {
			indent := func(pad, yaml string) string {
				if yaml == "" {
					return ""
				}
				return pad + strings.ReplaceAll(strings.TrimSuffix(yaml, "\n"), "\n", "\n"+pad) + "\n"
			}
			podSpec := func(pad, policy, extra string) string {
				return indent(pad, "containers:\n- name: main\n  image: example.com/main:1\ndnsPolicy: "+policy+"\n"+extra)
			}
			pod := func(name, policy, extra string) string {
				return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\nspec:\n" + podSpec("  ", policy, extra)
			}
			deployment := func(name, policy, extra string) string {
				return "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: " + name + "\nspec:\n  selector:\n    matchLabels:\n      app: " + name +
					"\n  template:\n    metadata:\n      labels:\n        app: " + name + "\n    spec:\n" + podSpec("      ", policy, extra)
			}
			unsupported := func(kind, name, spec string) run {
				return failed(invalidMessage(kind, name, fmt.Sprintf("%s.dnsPolicy: Unsupported value: %q: supported values: %s", spec, tt.policy, tt.supported)))
			}
			srv := startServer(t, t.TempDir())
			kc := srv.Kubeconfig
			ns := newNamespace(t, kc)
			wantKubectl(t, kc, pod("pol", tt.policy, tt.extra), ok("pod/pol created"), "-n", ns, "create", "-f", "-")
			wantKubectl(t, kc, deployment("pol", tt.policy, tt.extra), ok("deployment.apps/pol created"), "-n", ns, "create", "-f", "-")
			wantKubectl(t, kc, deployment("other", "ClusterFirst", ""), ok("deployment.apps/other created"), "-n", ns, "create", "-f", "-")

			srv.restart(t, "--feature-gates="+tt.gate+"=false")

			// The stored objects keep their policy and stay updatable: an
			// unrelated label, and a template change that keeps the policy.
			wantKubectl(t, kc, "", ok("pod/pol labeled"), "-n", ns, "label", "pod", "pol", "ratchet=on")
			wantKubectl(t, kc, "", ok("deployment.apps/pol labeled"), "-n", ns, "label", "deployment", "pol", "ratchet=on")
			wantKubectl(t, kc, "", ok("deployment.apps/pol patched"), "-n", ns, "patch", "deployment", "pol", "--type", "merge",
				"-p", `{"spec":{"template":{"spec":{"dnsConfig":{"options":[{"name":"timeout","value":"2"}]}}}}}`)
			if got := jsonpath(t, kc, ns, "pod", "pol", "{.spec.dnsPolicy}"); got != tt.policy {
				t.Errorf("pod dnsPolicy %q after the update, want %q", got, tt.policy)
			}
			if got := jsonpath(t, kc, ns, "deployment", "pol", "{.spec.template.spec.dnsPolicy}"); got != tt.policy {
				t.Errorf("deployment dnsPolicy %q after the updates, want %q", got, tt.policy)
			}
			// New objects with the policy, and templates switching to it, are not.
			wantKubectl(t, kc, pod("pol2", tt.policy, tt.extra), unsupported("Pod", "pol2", "spec"), "-n", ns, "create", "-f", "-")
			wantKubectl(t, kc, deployment("pol2", tt.policy, tt.extra), unsupported("Deployment", "pol2", "spec.template.spec"), "-n", ns, "create", "-f", "-")
			wantKubectl(t, kc, "", unsupported("Deployment", "other", "spec.template.spec"), "-n", ns, "patch", "deployment", "other", "--type", "merge", "-p", tt.switchTo)
			// Leaving the policy passes; coming back is then rejected.
			wantKubectl(t, kc, "", ok("deployment.apps/pol patched"), "-n", ns, "patch", "deployment", "pol", "--type", "json", "-p", tt.switchAway)
			wantKubectl(t, kc, "", unsupported("Deployment", "pol", "spec.template.spec"), "-n", ns, "patch", "deployment", "pol", "--type", "merge", "-p", tt.switchTo)
			if got := jsonpath(t, kc, ns, "deployment", "pol", "{.spec.template.spec.dnsPolicy}"); got != "ClusterFirst" {
				t.Errorf("deployment dnsPolicy %q, want ClusterFirst", got)
			}
		})
	}
}
