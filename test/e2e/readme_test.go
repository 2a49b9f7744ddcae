package e2e

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The README's command blocks are run as written (issue 18, item 8: a
// command in README that did not do what its text said went unnoticed). The
// test rewrites only what must differ on a test machine: the data dir, the
// binary and the DNS addresses, which `up` gets as flags.

// readmeCommand is one command of a ```sh block of README.md.
type readmeCommand struct {
	line    int    // 1-based, in README.md
	text    string // as written, without its trailing comment
	comment string // its trailing comment, "" for none
	exit    int    // the exit status the text promises
}

// readmeDoc is what the test takes from README.md: the commands of its
// ```sh blocks, in order, and its untagged blocks, which show what commands
// print.
type readmeDoc struct {
	commands []readmeCommand
	outputs  []string
}

// exitsRE finds the exit status a trailing comment promises, as in
// "# exits 1 on purpose"; a command without one must exit 0.
var exitsRE = regexp.MustCompile(`\bexits (\d+)\b`)

// parseReadme reads README.md's fenced blocks. It is strict so that
// nothing runnable goes unnoticed: every block is ```sh (commands) or
// untagged (output), and every fence is closed.
func parseReadme(src string) (readmeDoc, error) {
	var doc readmeDoc
	lines := strings.Split(src, "\n")
	for i := 0; i < len(lines); i++ {
		lang, ok := strings.CutPrefix(lines[i], "```")
		if !ok {
			continue
		}
		start := i + 1 // 0-based index of the block's first line
		end := start
		for end < len(lines) && lines[end] != "```" {
			if strings.HasPrefix(lines[end], "```") {
				return readmeDoc{}, fmt.Errorf("README.md:%d: a fence inside the block of line %d", end+1, i+1)
			}
			end++
		}
		if end == len(lines) {
			return readmeDoc{}, fmt.Errorf("README.md:%d: the block is not closed", i+1)
		}
		switch lang {
		case "sh":
			cmds, err := parseShBlock(lines[start:end], start+1)
			if err != nil {
				return readmeDoc{}, err
			}
			doc.commands = append(doc.commands, cmds...)
		case "":
			doc.outputs = append(doc.outputs, strings.Join(lines[start:end], "\n")+"\n")
		default:
			return readmeDoc{}, fmt.Errorf("README.md:%d: a ```%s block: commands go in ```sh, output in ``` (the test reads no other kind)", i+1, lang)
		}
		i = end
	}
	return doc, nil
}

// parseShBlock splits a ```sh block into commands: one a line (a trailing
// backslash continues it), "#" lines are comments, and " #" starts a
// trailing comment (README commands quote no "#").
func parseShBlock(lines []string, firstLine int) ([]readmeCommand, error) {
	var cmds []readmeCommand
	for i := 0; i < len(lines); i++ {
		line := firstLine + i
		text := strings.TrimSpace(lines[i])
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		for strings.HasSuffix(text, `\`) {
			if i+1 == len(lines) {
				return nil, fmt.Errorf("README.md:%d: the block ends in a continuation", line)
			}
			i++
			text = strings.TrimSpace(strings.TrimSuffix(text, `\`)) + " " + strings.TrimSpace(lines[i])
		}
		c := readmeCommand{line: line, text: text}
		if before, after, ok := strings.Cut(text, " #"); ok {
			c.text, c.comment = strings.TrimSpace(before), strings.TrimSpace(after)
		}
		if m := exitsRE.FindStringSubmatch(c.comment); m != nil {
			c.exit, _ = strconv.Atoi(m[1])
		}
		cmds = append(cmds, c)
	}
	return cmds, nil
}

// readmeKind is what the test does with a README command.
type readmeKind int

const (
	readmeRun     readmeKind = iota // run it with bash and check it
	readmeUp                        // the long-running `up`: the test starts it with its own flags
	readmeSkipped                   // the test suite itself
)

// classifyReadme says what the test does with a command. A command it
// does not know fails the test: whoever adds one says here how it is run.
func classifyReadme(text string) (readmeKind, error) {
	switch {
	case text == "go run ./cmd/dnsplane up":
		return readmeUp, nil
	case strings.HasPrefix(text, "go run ./cmd/dnsplane up "):
		return 0, fmt.Errorf("%q: the test starts up with its own flags and cannot honour the README's", text)
	case text == "bash .ci/run":
		return readmeSkipped, nil
	case strings.HasPrefix(text, "go run ./cmd/dnsplane "),
		strings.HasPrefix(text, "kubectl "),
		strings.HasPrefix(text, "dig "),
		strings.HasPrefix(text, "export KUBECONFIG="):
		return readmeRun, nil
	}
	return 0, fmt.Errorf("%q: the README test does not know this command; say in classifyReadme how to run it, and check what the text says it does", text)
}

// readmeResult is what one command did.
type readmeResult struct {
	stdout, stderr string
	exit           int
}

// readmeEnv is what the checks know of the test's `up`.
type readmeEnv struct {
	outputs   []string                // the README's output blocks, rewritten
	serviceIP func(*testing.T) string // svc1's cluster IP, once the README created it
}

// readmeCheck checks what the text says a command does, beyond its exit
// status. Each matches exactly one README command.
type readmeCheck struct {
	command *regexp.Regexp
	check   func(t *testing.T, env *readmeEnv, r readmeResult)
}

var readmeChecks = []readmeCheck{
	{regexp.MustCompile(`exec .* custom-pod -- cat /etc/resolv\.conf$`), func(t *testing.T, env *readmeEnv, r readmeResult) {
		t.Helper()
		if len(env.outputs) < 1 || r.stdout != env.outputs[0] {
			t.Errorf("printed:\n%s\nREADME's first output block says (addresses rewritten):\n%s", r.stdout, strings.Join(env.outputs[:min(1, len(env.outputs))], ""))
		}
	}},
	{regexp.MustCompile(`exec .* custom-pod -- getent ahosts svc1$`), func(t *testing.T, env *readmeEnv, r readmeResult) {
		t.Helper()
		ip := env.serviceIP(t)
		for line := range strings.Lines(r.stdout) {
			if f := strings.Fields(line); len(f) == 0 || f[0] != ip {
				t.Errorf("line %q: want the Service's cluster IP %s", line, ip)
			}
		}
		if r.stdout == "" {
			t.Errorf("printed nothing, want the Service's cluster IP %s", ip)
		}
	}},
	{regexp.MustCompile(`^kubectl exec -n ns1 custom-pod -- getent hosts svc1$`), func(t *testing.T, env *readmeEnv, r readmeResult) {
		t.Helper()
		if want := []string{env.serviceIP(t), "svc1.ns1.svc.cluster.local"}; !slices.Equal(strings.Fields(r.stdout), want) {
			t.Errorf("printed %q, want %v", r.stdout, want)
		}
	}},
	{regexp.MustCompile(`^dig @\S+ svc1\.ns1\.svc\.cluster\.local$`), func(t *testing.T, env *readmeEnv, r readmeResult) {
		t.Helper()
		want := [][]string{{"svc1.ns1.svc.cluster.local.", "A", env.serviceIP(t)}}
		if got := digAnswer(r.stdout); !slices.EqualFunc(got, want, slices.Equal) {
			t.Errorf("answer %v, want %v\n%s", got, want, r.stdout)
		}
	}},
	{regexp.MustCompile(`^dig @\S+ svc1\.search\.ns1\.cluster\.local\.ap\.k8s\.io$`), func(t *testing.T, env *readmeEnv, r readmeResult) {
		t.Helper()
		want := [][]string{
			{"svc1.search.ns1.cluster.local.ap.k8s.io.", "CNAME", "svc1.ns1.svc.cluster.local."},
			{"svc1.ns1.svc.cluster.local.", "A", env.serviceIP(t)},
		}
		if got := digAnswer(r.stdout); !slices.EqualFunc(got, want, slices.Equal) {
			t.Errorf("answer %v, want %v (one query: CNAME and A)\n%s", got, want, r.stdout)
		}
	}},
	{regexp.MustCompile(`resolvconf -f examples/custom-pod\.yaml -n ns1 `), func(t *testing.T, env *readmeEnv, r readmeResult) {
		t.Helper()
		if len(env.outputs) < 2 || r.stdout != env.outputs[1] {
			t.Errorf("printed:\n%s\nREADME's second output block says:\n%s", r.stdout, strings.Join(env.outputs[min(1, len(env.outputs)):min(2, len(env.outputs))], ""))
		}
	}},
	{regexp.MustCompile(`validate -f examples/$`), func(t *testing.T, env *readmeEnv, r readmeResult) {
		t.Helper()
		// "that file's five findings, one per line as FILE:LINE:COL:
		// FIELD: MESSAGE … then the summary on standard error".
		findings := 0
		for line := range strings.Lines(r.stdout) {
			findings++
			if !strings.HasPrefix(line, "examples/invalid-deployment.yaml:") {
				t.Errorf("finding outside invalid-deployment.yaml: %s", line)
			}
		}
		if findings != 5 {
			t.Errorf("%d findings, want 5:\n%s", findings, r.stdout)
		}
		if want := "5 objects: 4 valid, 1 invalid, 0 skipped\n"; r.stderr != want {
			t.Errorf("stderr %q, want %q", r.stderr, want)
		}
	}},
	{regexp.MustCompile(`validate -f examples/underscore-search-pod\.yaml --feature-gates=RelaxedDNSSearchValidation=false$`), func(t *testing.T, env *readmeEnv, r readmeResult) {
		t.Helper()
		if want := `examples/underscore-search-pod.yaml:16:9: spec.dnsConfig.searches[0]: Invalid value: "abc_d.example.com": `; !strings.HasPrefix(r.stdout, want) {
			t.Errorf("printed %q, want the underscore entry rejected: %q…", r.stdout, want)
		}
	}},
}

// digAnswer is dig's answer section as name, type, data triples.
func digAnswer(out string) [][]string {
	var rrs [][]string
	_, section, ok := strings.Cut(out, ";; ANSWER SECTION:\n")
	if !ok {
		return nil
	}
	for line := range strings.Lines(section) {
		f := strings.Fields(line)
		if len(f) < 5 {
			break
		}
		rrs = append(rrs, []string{f[0], f[3], f[4]})
	}
	return rrs
}

// bannerAddr is the host of an address in up's banner ("  node cache:  ADDR").
func bannerAddr(t *testing.T, banner, label string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(label) + `:\s+(\S+)$`).FindStringSubmatch(banner)
	if m == nil {
		t.Fatalf("up printed no %q line:\n%s", label, banner)
	}
	host, port, err := net.SplitHostPort(m[1])
	if err != nil || port != "53" {
		// The README's dig and pods' resolv.conf name no port.
		t.Fatalf("up's %s is %q, want ADDR:53", label, m[1])
	}
	return host
}

// TestReadmeCommands runs every ```sh command of README.md in order, as a
// reader would in a second terminal, against one `up` the test starts (the
// README's `up` with flags added: a temp data dir and test DNS addresses on
// port 53), and checks each exit status and what the text says it prints.
func TestReadmeCommands(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := parseReadme(readFile(t, filepath.Join(root, "README.md")))
	if err != nil {
		t.Fatal(err)
	}
	// Every command is known and every check has its command before
	// anything starts, so a new or renamed command fails at once.
	kinds := make([]readmeKind, len(doc.commands))
	for i, c := range doc.commands {
		if kinds[i], err = classifyReadme(c.text); err != nil {
			t.Errorf("README.md:%d: %v", c.line, err)
		}
	}
	checkOf := map[int]readmeCheck{} // command index → check
	for _, ch := range readmeChecks {
		var matched []int
		for i, c := range doc.commands {
			if ch.command.MatchString(c.text) {
				matched = append(matched, i)
			}
		}
		if len(matched) != 1 {
			t.Errorf("check %q matches %d README commands, want 1", ch.command, len(matched))
			continue
		}
		checkOf[matched[0]] = ch
	}
	if t.Failed() {
		return
	}
	if want := 2; len(doc.outputs) != want {
		t.Errorf("README has %d untagged blocks, want %d: they are the outputs the checks compare, in order (the exec'd resolv.conf, resolvconf's)", len(doc.outputs), want)
	}
	requireRoot(t)
	requireKubectl(t)
	if _, err := exec.LookPath("dig"); err != nil {
		t.Skip("dig is not installed (apt-get install dnsutils; .ci/run installs it)")
	}

	dataDir := filepath.Join(t.TempDir(), "data")
	u := startUp(t, dataDir, nil,
		"--dns-listen", loopback53(t, 13), "--nodecache-listen", loopback53(t, 23),
		"--upstream-resolv-conf", filepath.Join(root, "examples", "host-resolv.conf"))
	banner, err := u.stdout.waitFor(serverStartTimeout, u.exited, regexp.MustCompile(`(?m)^  node cache: .*\n`).MatchString)
	if err != nil {
		t.Fatalf("up's banner has no node cache line: %v\n%s", err, banner)
	}
	nodeCache, clusterDNS := bannerAddr(t, banner, "node cache"), bannerAddr(t, banner, "cluster DNS")
	if want := filepath.Join(dataDir, "kubeconfig"); u.Kubeconfig != want {
		t.Errorf("up wrote its kubeconfig to %s, want %s (the README's ~/.dnsplane/kubeconfig)", u.Kubeconfig, want)
	}
	rewrite := strings.NewReplacer(
		"go run ./cmd/dnsplane", dnsplaneBin,
		"~/.dnsplane", dataDir,
		"127.0.20.10", nodeCache,
		"127.0.10.10", clusterDNS,
	).Replace

	env := &readmeEnv{}
	for _, o := range doc.outputs {
		env.outputs = append(env.outputs, rewrite(o))
	}
	var ip string
	env.serviceIP = func(t *testing.T) string {
		t.Helper()
		if ip == "" {
			ip = mustKubectl(t, u.Kubeconfig, "", "get", "service", "svc1", "-n", "ns1", "-o", "jsonpath={.spec.clusterIP}")
		}
		return ip
	}
	// A fresh HOME keeps kubectl's cache and anything else a command
	// writes under ~ out of the machine's; KUBECONFIG is the README's.
	home := t.TempDir()
	baseEnv := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "KUBECONFIG=") || strings.HasPrefix(kv, "HOME=")
	})
	baseEnv = append(baseEnv, "HOME="+home)

	var exports []string
	for i, c := range doc.commands {
		switch kinds[i] {
		case readmeSkipped:
			continue
		case readmeUp:
			// The harness's up is the README's with flags added.
			readme := strings.Fields(rewrite(c.text))
			if got := u.cmd.Args; len(got) <= len(readme) || !slices.Equal(got[:len(readme)], readme) || !strings.HasPrefix(got[len(readme)], "--") {
				t.Errorf("README.md:%d: the test runs %q, not %q with flags added", c.line, got, readme)
			}
			continue
		}
		cmd := rewrite(c.text)
		if strings.HasPrefix(c.text, "export ") {
			exports = append(exports, cmd)
		}
		r := runReadmeCommand(t, root, baseEnv, append(slices.Clone(exports), cmd))
		t.Logf("README.md:%d: %s: exit %d", c.line, c.text, r.exit)
		if r.exit != c.exit {
			t.Errorf("README.md:%d: %s\n(run as %s)\nexit %d, want %d\nstdout:\n%s\nstderr:\n%s", c.line, c.text, cmd, r.exit, c.exit, r.stdout, r.stderr)
			continue
		}
		if ch, ok := checkOf[i]; ok {
			t.Run(fmt.Sprintf("README.md:%d", c.line), func(t *testing.T) { ch.check(t, env, r) })
		}
	}
}

// runReadmeCommand runs the script lines with bash in dir.
func runReadmeCommand(t *testing.T, dir string, env, script []string) readmeResult {
	t.Helper()
	cmd := exec.CommandContext(ctxFor(t, 90*time.Second), "bash", "-e", "-o", "pipefail", "-c", strings.Join(script, "\n"))
	cmd.Dir, cmd.Env = dir, env
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	r := readmeResult{stdout: out.String(), stderr: errOut.String()}
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		r.exit = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("bash -c %q: %v", script, err)
	}
	return r
}

// TestParseReadme is the parser's contract: what it takes from a block,
// and the inputs it refuses rather than skip.
func TestParseReadme(t *testing.T) {
	t.Parallel()
	t.Run("commands and outputs", func(t *testing.T) {
		t.Parallel()
		src := "text\n```sh\n# a comment\nkubectl get ns   # all\n\ngo run ./cmd/dnsplane validate -f x \\\n  -q   # exits 1 on purpose\n```\nprints:\n```\nline 1\nline 2\n```\n"
		doc, err := parseReadme(src)
		if err != nil {
			t.Fatal(err)
		}
		want := []readmeCommand{
			{line: 4, text: "kubectl get ns", comment: "all"},
			{line: 6, text: "go run ./cmd/dnsplane validate -f x -q", comment: "exits 1 on purpose", exit: 1},
		}
		if !slices.Equal(doc.commands, want) {
			t.Errorf("commands %+v, want %+v", doc.commands, want)
		}
		if want := []string{"line 1\nline 2\n"}; !slices.Equal(doc.outputs, want) {
			t.Errorf("outputs %q, want %q", doc.outputs, want)
		}
	})
	for name, src := range map[string]string{
		"unclosed":           "```sh\nkubectl get ns\n",
		"other language":     "```bash\nkubectl get ns\n```\n",
		"fence inside":       "```sh\nkubectl get ns\n```yaml\n```\n",
		"dangling backslash": "```sh\nkubectl get \\\n```\n",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if doc, err := parseReadme(src); err == nil {
				t.Errorf("parsed %+v, want an error", doc)
			}
		})
	}
	for text, want := range map[string]readmeKind{
		"go run ./cmd/dnsplane up":        readmeUp,
		"bash .ci/run":                    readmeSkipped,
		"kubectl get ns":                  readmeRun,
		"go run ./cmd/dnsplane validate":  readmeRun,
		"dig @127.0.20.10 a.example":      readmeRun,
		"export KUBECONFIG=~/.dnsplane/x": readmeRun,
	} {
		if got, err := classifyReadme(text); err != nil || got != want {
			t.Errorf("classifyReadme(%q) = %v, %v; want %v", text, got, err, want)
		}
	}
	for _, text := range []string{"curl http://x", "go build ./...", "go run ./cmd/dnsplane up --data-dir x", "rm -rf ~/.dnsplane"} {
		if _, err := classifyReadme(text); err == nil {
			t.Errorf("classifyReadme(%q) accepted it, want an error", text)
		}
	}
}
