package main

import (
	"testing"
)

func TestParseStat(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in string
		want     int64
		ok       bool
	}{
		{"plain", "1234 (kube-scheduler) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 31 0 0 20 0 12 0", 281, true},
		{"command with spaces and parens", "7 (a) b (c)) R 1 7 7 0 -1 0 0 0 0 0 5 6 0 0", 11, true},
		{"no paren", "7 a R 1", 0, false},
		{"too few fields", "7 (a) R 1 2 3", 0, false},
		{"not a number", "7 (a) R 1 7 7 0 -1 0 0 0 0 0 x 6 0 0", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := parseStat([]byte(tc.in))
			if (err == nil) != tc.ok || got != tc.want {
				t.Errorf("parseStat(%q) = %d, %v; want %d, ok %v", tc.in, got, err, tc.want, tc.ok)
			}
		})
	}
}

func TestParseVmRSS(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in string
		want     int64
		ok       bool
	}{
		{"present", "Name:\tx\nVmPeak:\t 10 kB\nVmRSS:\t  123456 kB\nRssAnon:\t 1 kB\n", 123456, true},
		{"absent (a zombie)", "Name:\tx\nState:\tZ (zombie)\n", 0, false},
		{"other unit", "VmRSS:\t1 MB\n", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := parseVMRSS([]byte(tc.in))
			if (err == nil) != tc.ok || got != tc.want {
				t.Errorf("parseVMRSS(%q) = %d, %v; want %d, ok %v", tc.in, got, err, tc.want, tc.ok)
			}
		})
	}
}

func TestParseProcs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want []proc
		ok   bool
	}{
		{"", nil, true},
		{"controllers=12,scheduler=34", []proc{{"controllers", 12}, {"scheduler", 34}}, true},
		{"controllers", nil, false},
		{"=12", nil, false},
		{"a=0", nil, false},
		{"a=x", nil, false},
	} {
		got, err := parseProcs(tc.in)
		if (err == nil) != tc.ok || len(got) != len(tc.want) {
			t.Errorf("parseProcs(%q) = %v, %v; want %v, ok %v", tc.in, got, err, tc.want, tc.ok)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("parseProcs(%q)[%d] = %v, want %v", tc.in, i, got[i], tc.want[i])
			}
		}
	}
}

// FuzzParseStat: any bytes (a process may name itself anything) give a
// value or an error, never a panic.
func FuzzParseStat(f *testing.F) {
	f.Add([]byte("1234 (kube-scheduler) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 31 0 0"))
	f.Add([]byte("7 (a) b (c)) R"))
	f.Fuzz(func(_ *testing.T, b []byte) {
		_, _ = parseStat(b)
	})
}

func TestRequestKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ verb, group, resource, sub, want string }{
		{"create", "", "pods", "binding", "create pods binding"},
		{"create", "events.k8s.io", "events", "", "create events.events.k8s.io -"},
		{"get", "", "", "", "get - -"},
	} {
		if got := requestKey(tc.verb, tc.group, tc.resource, tc.sub); got != tc.want {
			t.Errorf("requestKey(%q, %q, %q, %q) = %q, want %q", tc.verb, tc.group, tc.resource, tc.sub, got, tc.want)
		}
	}
}
