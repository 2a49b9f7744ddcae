package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestExamplesNamesAndNamespaces keeps examples/ safe to try in a cluster
// someone already uses: every object has its own name (two examples that
// share one make the second `kubectl create` fail, and tutorial names like
// "web" collide with the reader's own objects), and none fixes a namespace,
// so `kubectl create -n NS -f` works in any namespace instead of failing
// with kubectl's namespace mismatch error.
func TestExamplesNamesAndNamespaces(t *testing.T) {
	chdirRoot(t)
	files, err := filepath.Glob("examples/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	owner := map[string]string{} // kind/name → file
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var obj struct {
				Kind     string `json:"kind"`
				Metadata struct {
					Name      string `json:"name"`
					Namespace string `json:"namespace"`
				} `json:"metadata"`
			}
			// Lenient on purpose: invalid-deployment.yaml has a duplicate
			// field, which is what it demonstrates.
			if err := yaml.Unmarshal(data, &obj); err != nil {
				t.Fatal(err)
			}
			if obj.Metadata.Namespace != "" {
				t.Errorf("metadata.namespace %q: leave it out so -n chooses it", obj.Metadata.Namespace)
			}
			// Naming each object after its file makes names distinct and
			// tells a reader which file created an object they find.
			if want := strings.TrimSuffix(filepath.Base(f), ".yaml"); obj.Metadata.Name != want {
				t.Errorf("metadata.name = %q, want %q (the file's name)", obj.Metadata.Name, want)
			}
			key := obj.Kind + "/" + obj.Metadata.Name
			if other, ok := owner[key]; ok {
				t.Errorf("%s is also defined in %s", key, other)
			}
			owner[key] = f
		})
	}
}

// TestValidateExamplesDir is the README's `validate -f examples/`: it exits 1
// on purpose, and only because of invalid-deployment.yaml.
func TestValidateExamplesDir(t *testing.T) {
	chdirRoot(t)
	out, errOut, code := runCmd(t, "", "validate", "-f", "examples/")
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	for line := range strings.Lines(out) {
		if !strings.HasPrefix(line, "examples/invalid-deployment.yaml:") {
			t.Errorf("finding outside invalid-deployment.yaml: %s", line)
		}
	}
	if want := "5 objects: 4 valid, 1 invalid, 0 skipped\n"; errOut != want {
		t.Errorf("stderr = %q, want %q", errOut, want)
	}
}
