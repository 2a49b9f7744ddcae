package podexec

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func TestIdentityOf(t *testing.T) {
	t.Parallel()
	pod := func(psc *corev1.PodSecurityContext, sc ...*corev1.SecurityContext) *corev1.Pod {
		p := &corev1.Pod{Spec: corev1.PodSpec{SecurityContext: psc}}
		p.Namespace, p.Name = "ns1", "web"
		for i, s := range sc {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: []string{"main", "side"}[i], SecurityContext: s})
		}
		return p
	}
	withInit := func(p *corev1.Pod, sc *corev1.SecurityContext) *corev1.Pod {
		p.Spec.InitContainers = append(p.Spec.InitContainers, corev1.Container{Name: "init", SecurityContext: sc})
		return p
	}
	nobody := Identity{UID: Nobody, GID: Nobody}
	tests := []struct {
		name      string
		pod       *corev1.Pod
		container string
		want      Identity
		wantErr   string
	}{
		{"nothing set", pod(nil, nil), "", nobody, ""},
		{"no containers", pod(nil), "", nobody, ""},
		{"pod's user", pod(&corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000), RunAsGroup: ptr.To[int64](2000)}, nil), "main",
			Identity{UID: 1000, GID: 2000}, ""},
		{"user without group keeps nobody's group", pod(&corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000)}, nil), "",
			Identity{UID: 1000, GID: Nobody}, ""},
		{"container's over pod's", pod(&corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000), RunAsGroup: ptr.To[int64](2000)},
			&corev1.SecurityContext{RunAsUser: ptr.To[int64](1001)}), "", Identity{UID: 1001, GID: 2000}, ""},
		{"named container", pod(nil, nil, &corev1.SecurityContext{RunAsUser: ptr.To[int64](7)}), "side", Identity{UID: 7, GID: Nobody}, ""},
		{"supplemental groups and fsGroup", pod(&corev1.PodSecurityContext{SupplementalGroups: []int64{5, 6}, FSGroup: ptr.To[int64](9)}, nil), "",
			Identity{UID: Nobody, GID: Nobody, Groups: []uint32{5, 6, 9}}, ""},
		{"privileged is root", pod(nil, &corev1.SecurityContext{Privileged: ptr.To(true)}), "", Identity{Privileged: true}, ""},
		{"privileged other container is not", pod(nil, &corev1.SecurityContext{}, &corev1.SecurityContext{Privileged: ptr.To(true)}), "main", nobody, ""},
		{"privileged with a user", pod(nil, &corev1.SecurityContext{Privileged: ptr.To(true), RunAsUser: ptr.To[int64](1000)}), "",
			Identity{UID: 1000, GID: 0, Privileged: true}, ""},
		// Only privileged: true is root with capabilities (issue 22 item
		// 3): no other field of a securityContext gets there.
		{"privileged false", pod(nil, &corev1.SecurityContext{Privileged: ptr.To(false)}), "", nobody, ""},
		{"capabilities and escalation without privileged", pod(nil, &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(true),
			Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"ALL", "SYS_ADMIN"}}}), "", nobody, ""},
		{"windows hostProcess is not privileged here", pod(nil, &corev1.SecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{HostProcess: ptr.To(true)}}),
			"", nobody, ""},
		{"privileged init container is not the first container", withInit(pod(nil, nil), &corev1.SecurityContext{Privileged: ptr.To(true)}), "", nobody, ""},
		{"privileged init container named", withInit(pod(nil, nil), &corev1.SecurityContext{Privileged: ptr.To(true)}), "init", Identity{Privileged: true}, ""},
		{"runAsUser 0 is root without privileges", pod(&corev1.PodSecurityContext{RunAsUser: ptr.To[int64](0)}, nil), "",
			Identity{UID: 0, GID: Nobody}, ""},
		{"runAsNonRoot with root", pod(&corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true)}, &corev1.SecurityContext{RunAsUser: ptr.To[int64](0)}), "",
			Identity{}, "container's runAsUser breaks non-root policy (pod: ns1/web, container: )"},
		{"runAsNonRoot with nobody", pod(&corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true)}, nil), "", nobody, ""},
		{"no such container", pod(nil, nil), "other", Identity{}, "container other is not valid for pod web"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := IdentityOf(tt.pod, tt.container)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("IdentityOf = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

// TestParseArgs: what Args writes ParseArgs reads back; without --user the
// command runs as nobody, never as root.
func TestParseArgs(t *testing.T) {
	t.Parallel()
	for _, id := range []Identity{
		{UID: Nobody, GID: Nobody},
		{UID: 1000, GID: 2000, Groups: []uint32{3, 4}},
		{Privileged: true},
		{UID: 5, GID: 6, Privileged: true},
	} {
		dir, got, argv, err := ParseArgs(Args("/d", id, []string{"id", "-u", "--user=0:0"}))
		if err != nil || dir != "/d" || !reflect.DeepEqual(got, id) || !reflect.DeepEqual(argv, []string{"id", "-u", "--user=0:0"}) {
			t.Errorf("%+v: ParseArgs = %q %+v %q %v", id, dir, got, argv, err)
		}
	}
	if _, got, _, err := ParseArgs([]string{"/d", "--", "true"}); err != nil || !reflect.DeepEqual(got, Identity{UID: Nobody, GID: Nobody}) {
		t.Errorf("no flags: %+v %v, want nobody", got, err)
	}
	for _, bad := range [][]string{
		{"--user=0", "/d", "--", "true"},
		{"--user=a:b", "/d", "--", "true"},
		{"--user=4294967295:0", "/d", "--", "true"},
		{"--groups=1,,2", "/d", "--", "true"},
		{"--bogus", "/d", "--", "true"},
		{"/d", "true"},
		{"/d", "--"},
	} {
		if _, _, _, err := ParseArgs(bad); err == nil {
			t.Errorf("ParseArgs(%q) accepted", bad)
		} else if !strings.Contains(err.Error(), "user") && !strings.Contains(err.Error(), "usage") && !strings.Contains(err.Error(), "group") {
			t.Errorf("ParseArgs(%q): %v", bad, err)
		}
	}
}

// FuzzParseArgs: the subcommand's arguments never panic the parser, and
// what it accepts is written back by Args to the same parse.
func FuzzParseArgs(f *testing.F) {
	f.Add("--user=1000:2000\x00--groups=3,4\x00/d\x00--\x00id")
	f.Add("--privileged\x00/d\x00--\x00sh")
	f.Add("/d\x00--\x00true")
	f.Add("--user=4294967295:0\x00/d\x00--\x00x")
	f.Fuzz(func(t *testing.T, joined string) {
		dir, id, argv, err := ParseArgs(strings.Split(joined, "\x00"))
		if err != nil {
			return
		}
		dir2, id2, argv2, err := ParseArgs(Args(dir, id, argv))
		if err != nil || dir2 != dir || !reflect.DeepEqual(id2, id) || !reflect.DeepEqual(argv2, argv) {
			t.Errorf("round trip of %q: %q %+v %q %v, want %q %+v %q", joined, dir2, id2, argv2, err, dir, id, argv)
		}
		if id.UID == 1<<32-1 || id.GID == 1<<32-1 {
			t.Errorf("%q: accepted (uid_t)-1: %+v", joined, id)
		}
	})
}
