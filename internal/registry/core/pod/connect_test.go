package pod

import (
	"net/url"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
)

func TestParseExecOptions(t *testing.T) {
	o, err := parseExecOptions(url.Values{"command": {"sh", "-c", "x"}, "stdin": {"true"}, "stdout": {"1"}, "stderr": {"true"}, "tty": {"true"}, "container": {"c"}})
	if err != nil {
		t.Fatal(err)
	}
	if !o.stdin || !o.stdout || o.stderr || !o.tty || o.container != "c" || !slices.Equal(o.command, []string{"sh", "-c", "x"}) {
		t.Errorf("%+v (stderr is dropped with a tty)", o)
	}
	for q, want := range map[string]string{
		"stdout=true":                 "you must specify at least one command for the container",
		"command=ls":                  "you must specify at least 1 of stdin, stdout, stderr",
		"command=ls&stdout=maybe":     `stdout: "maybe" is not a boolean`,
		"command=ls&stdout=false&x=1": "you must specify at least 1 of stdin, stdout, stderr",
	} {
		v, _ := url.ParseQuery(q)
		_, err := parseExecOptions(v)
		if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want 400 %q", q, err, want)
		}
	}
}

func TestExecContainer(t *testing.T) {
	pod := &dpcorev1.Pod{}
	pod.Name = "web"
	pod.Spec.InitContainers = []corev1.Container{{Name: "init"}}
	pod.Spec.Containers = []corev1.Container{{Name: "main"}, {Name: "side"}}
	for name, want := range map[string]string{"": "main", "side": "side", "init": "init"} {
		if got, err := execContainer(pod, name); err != nil || got != want {
			t.Errorf("%q: %q, %v; want %q", name, got, err, want)
		}
	}
	if _, err := execContainer(pod, "other"); !apierrors.IsBadRequest(err) || err.Error() != "container other is not valid for pod web" {
		t.Errorf("other: %v", err)
	}
}
