package apiserver

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// healthEndpoints are kube-apiserver's three health endpoints. Each serves
// the same checks here: dnsplane has no post-start hooks, informers or
// shutdown delay of its own to report.
var healthEndpoints = []string{"healthz", "livez", "readyz"}

// healthCheck is one named check, served alone at /<endpoint>/<name>.
type healthCheck struct {
	name  string
	check func(context.Context) error
}

// etcdHealthTimeout bounds the etcd check so a probe never hangs on a
// partitioned etcd.
const etcdHealthTimeout = 2 * time.Second

func (s *Server) healthChecks() []healthCheck {
	return []healthCheck{
		{name: "ping", check: func(context.Context) error { return nil }},
		{name: "etcd", check: func(ctx context.Context) error {
			ctx, cancel := context.WithTimeout(ctx, etcdHealthTimeout)
			defer cancel()
			_, err := s.storage.CurrentRevision(ctx)
			return err
		}},
	}
}

// healthPath splits /livez, /livez/<check> and the like; ok=false for other
// paths.
func healthPath(p string) (endpoint, check string, ok bool) {
	endpoint, check, sub := strings.Cut(strings.TrimPrefix(p, "/"), "/")
	if !slices.Contains(healthEndpoints, endpoint) || (sub && check == "") {
		return "", "", false
	}
	return endpoint, check, true
}

// serveHealth answers the health endpoints in kube-apiserver's format.
//
// The roots are public (system:public-info-viewer): "ok", or with ?verbose
// one line per check and "<endpoint> check passed"; ?exclude=<check> skips
// a check. A failure is a 500 listing which checks failed, with the reasons
// withheld because anyone may read it; they go to the log instead.
//
// /<endpoint>/<check> runs one check, "ok" or a 500 with the reason. Like
// kube, where only system:monitoring may read these, they need credentials:
// they are not in publicPaths.
func (s *Server) serveHealth(w http.ResponseWriter, r *http.Request, endpoint, name string) {
	checks := s.healthChecks()
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	if name != "" {
		i := slices.IndexFunc(checks, func(c healthCheck) bool { return c.name == name })
		if i < 0 {
			writeError(w, s.log, errNotFoundPath())
			return
		}
		if err := checks[i].check(r.Context()); err != nil {
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprintf(w, "internal server error: %v\n", err)
			return
		}
		_, _ = w.Write([]byte("ok"))
		return
	}

	excluded := map[string]bool{}
	for _, v := range r.URL.Query()["exclude"] {
		excluded[v] = true
	}
	var out strings.Builder
	var failed []string
	for _, c := range checks {
		if excluded[c.name] {
			delete(excluded, c.name)
			fmt.Fprintf(&out, "[+]%s excluded: ok\n", c.name)
			continue
		}
		if err := c.check(r.Context()); err != nil {
			s.log.Warn("health check failed", "endpoint", endpoint, "check", c.name, "err", err)
			fmt.Fprintf(&out, "[-]%s failed: reason withheld\n", c.name)
			failed = append(failed, c.name)
			continue
		}
		fmt.Fprintf(&out, "[+]%s ok\n", c.name)
	}
	if len(excluded) > 0 {
		var unknown []string
		for n := range excluded {
			unknown = append(unknown, fmt.Sprintf("%q", n))
		}
		slices.Sort(unknown)
		fmt.Fprintf(&out, "warn: some health checks cannot be excluded: no matches for %s\n", strings.Join(unknown, ","))
	}
	if len(failed) > 0 {
		// Failures are always verbose, as kube's.
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintf(w, "%s%s check failed\n", out.String(), endpoint)
		return
	}
	if _, verbose := r.URL.Query()["verbose"]; !verbose {
		_, _ = w.Write([]byte("ok"))
		return
	}
	fmt.Fprintf(w, "%s%s check passed\n", out.String(), endpoint)
}
