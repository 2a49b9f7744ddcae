package e2e

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// The docs' command blocks are run as written (issue 18, item 8: a command
// in README that did not do what its text said went unnoticed; issue 21,
// item 6: the same for docs/tour.md and every other page). Every ```sh
// block of README.md and docs/*.md is run, in order, in the environment
// docPages gives its page, or is marked `<!-- not run: REASON -->` on the
// line before its fence; any other fails TestDocsBlocksAccountedFor naming
// it. The test rewrites only what must differ on a test machine: the data
// dir, the binary and the addresses, which the servers it starts get as
// flags (docs/development.md, "The docs run").

// docEnv is what a page's commands run against.
type docEnv int

const (
	// envOffline: no server; the commands read files.
	envOffline docEnv = iota
	// envUp: one `dnsplane up` that the page's first up command starts
	// (with the page's flags and the test's) and a later one restarts.
	envUp
	// envAPIServer: one `dnsplane apiserver` with embedded etcd.
	envAPIServer
)

// docPages are the pages whose ```sh blocks run, each in its own
// environment, in this order. A page with a ```sh block that is neither
// here nor marked "not run" fails TestDocsBlocksAccountedFor.
var docPages = []struct {
	path string
	env  docEnv
}{
	{"README.md", envUp},
	{"docs/tour.md", envUp},
	{"docs/agent.md", envUp},
	{"docs/autopath.md", envUp},
	{"docs/apiserver.md", envAPIServer},
	{"docs/resolvconf.md", envOffline},
}

// notRunRE is the mark of a ```sh block the test does not run, on the last
// non-blank line before its fence; the reason is logged. "test: NAME"
// marks a block another test runs (docs/kubernetes.md's install and
// uninstall: test/kube, against the real kube-apiserver).
var notRunRE = regexp.MustCompile(`^<!-- (?:not run: (\S.*\S)|test: (\S+)) -->$`)

// docCommand is one command of a ```sh block.
type docCommand struct {
	line    int    // 1-based, in the page
	text    string // as written, without its trailing comment
	comment string // its trailing comment, "" for none
	exit    int    // the exit status the text promises
}

// docBlock is one ```sh block.
type docBlock struct {
	line     int    // of its opening fence, 1-based
	notRun   string // the reason of its "not run" mark, "" when it runs
	commands []docCommand
	// output is the untagged block right after it (nothing but blank
	// lines between): what its last command prints, compared by the test.
	output    string
	hasOutput bool
}

// docPage is what the test takes from a page: its ```sh blocks, and the
// untagged blocks not attached to one (README's checks compare those).
type docPage struct {
	blocks  []docBlock
	outputs []string
}

// commands are the page's runnable commands, in order, with the block
// each ends (-1 when it ends none).
func (p docPage) commands() (cmds []docCommand, last []int) {
	for i, b := range p.blocks {
		if b.notRun != "" {
			continue
		}
		for j, c := range b.commands {
			cmds = append(cmds, c)
			if j == len(b.commands)-1 {
				last = append(last, i)
			} else {
				last = append(last, -1)
			}
		}
	}
	return cmds, last
}

// exitsRE finds the exit status a trailing comment promises, as in
// "# exits 1 on purpose"; a command without one must exit 0.
var exitsRE = regexp.MustCompile(`\bexits (\d+)\b`)

// shellLangs are fence languages that would hide commands from the test:
// commands go in ```sh.
var shellLangs = []string{"bash", "shell", "console", "shell-session", "zsh", "terminal"}

// parseDoc reads a page's fenced blocks. It is strict so that nothing
// runnable goes unnoticed: commands are in ```sh, every fence is closed, and
// a "not run" mark stands right before a ```sh fence. Blocks of other
// languages (```yaml, ```go) are not read.
func parseDoc(page, src string) (docPage, error) {
	var doc docPage
	lines := strings.Split(src, "\n")
	prev := ""   // the last non-blank line before the current one
	lastSh := -1 // index in doc.blocks of a ```sh block that only blank lines follow
	for i := 0; i < len(lines); i++ {
		lang, ok := strings.CutPrefix(lines[i], "```")
		if !ok {
			if strings.TrimSpace(lines[i]) != "" {
				if notRunRE.MatchString(prev) {
					return docPage{}, fmt.Errorf("%s:%d: a \"not run\" mark that no ```sh fence follows", page, i)
				}
				prev, lastSh = lines[i], -1
			}
			continue
		}
		start := i + 1 // 0-based index of the block's first line
		end := start
		for end < len(lines) && lines[end] != "```" {
			if strings.HasPrefix(lines[end], "```") {
				return docPage{}, fmt.Errorf("%s:%d: a fence inside the block of line %d", page, end+1, i+1)
			}
			end++
		}
		if end == len(lines) {
			return docPage{}, fmt.Errorf("%s:%d: the block is not closed", page, i+1)
		}
		mark := notRunRE.FindStringSubmatch(prev)
		if mark != nil && lang != "sh" {
			return docPage{}, fmt.Errorf("%s:%d: a \"not run\" mark before a ```%s block: only ```sh blocks run", page, i+1, lang)
		}
		switch {
		case lang == "sh":
			cmds, err := parseShBlock(page, lines[start:end], start+1)
			if err != nil {
				return docPage{}, err
			}
			b := docBlock{line: i + 1, commands: cmds}
			switch {
			case mark != nil && mark[2] != "":
				b.notRun = "run by the test that reads the mark " + mark[2]
			case mark != nil:
				b.notRun = mark[1]
			}
			doc.blocks = append(doc.blocks, b)
			lastSh = len(doc.blocks) - 1
		case lang == "":
			out := strings.Join(lines[start:end], "\n") + "\n"
			if lastSh >= 0 {
				doc.blocks[lastSh].output, doc.blocks[lastSh].hasOutput = out, true
			} else {
				doc.outputs = append(doc.outputs, out)
			}
			lastSh = -1
		case slices.Contains(shellLangs, lang):
			return docPage{}, fmt.Errorf("%s:%d: a ```%s block: commands go in ```sh, which the docs test runs", page, i+1, lang)
		default:
			lastSh = -1
		}
		prev, i = "```", end
	}
	if notRunRE.MatchString(prev) {
		return docPage{}, fmt.Errorf("%s: the page ends in a \"not run\" mark", page)
	}
	return doc, nil
}

// parseShBlock splits a ```sh block into commands: one a line (a trailing
// backslash continues it), "#" lines are comments, and " #" starts a
// trailing comment (the docs' commands quote no " #").
func parseShBlock(page string, lines []string, firstLine int) ([]docCommand, error) {
	var cmds []docCommand
	for i := 0; i < len(lines); i++ {
		line := firstLine + i
		text := strings.TrimSpace(lines[i])
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		for strings.HasSuffix(text, `\`) {
			if i+1 == len(lines) {
				return nil, fmt.Errorf("%s:%d: the block ends in a continuation", page, line)
			}
			i++
			text = strings.TrimSpace(strings.TrimSuffix(text, `\`)) + " " + strings.TrimSpace(lines[i])
		}
		c := docCommand{line: line, text: text}
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

// docKind is what the test does with a command.
type docKind int

const (
	docRun        docKind = iota // run it with bash and check it
	docUp                        // `up`: the test starts (or restarts) it with its own flags added
	docAPIServer                 // `apiserver`: the test starts it with its own flags added
	docBackground                // a server the reader leaves running in another terminal
	docSkipped                   // the test suite itself
)

// dnsplaneCmdRE is how the docs run the binary; the test runs its build.
var dnsplaneCmdRE = regexp.MustCompile(`^(?:go run (?:-v )?\./cmd/dnsplane|\./dnsplane|dnsplane)(?: |$)`)

// testOwnedFlags are the flags the test gives the servers it starts: a page
// setting one would not be run as written.
var testOwnedFlags = []string{"--dns-listen", "--nodecache-listen", "--secure-port", "--upstream"}

// runnablePrefixes are the programs a docs command may start with.
var runnablePrefixes = []string{"kubectl ", "dig ", "export KUBECONFIG=", "cat ", "musl-gcc "}

// classifyDoc says what the test does with a command in an environment. A
// command it does not know fails the test: whoever adds one says here how it
// is run.
func classifyDoc(env docEnv, text string) (docKind, error) {
	if text == "bash .ci/run" {
		return docSkipped, nil
	}
	if m := dnsplaneCmdRE.FindString(text); m != "" {
		args := strings.Fields(text[len(m):])
		sub := ""
		if len(args) > 0 {
			sub = args[0]
		}
		for _, a := range args {
			name, _, _ := strings.Cut(a, "=")
			if slices.Contains(testOwnedFlags, name) {
				return 0, fmt.Errorf("%q: the test gives %s itself and cannot honour the page's", text, name)
			}
		}
		switch {
		case sub == "up" && env == envUp:
			if slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--data-dir") }) {
				return 0, fmt.Errorf("%q: the test gives --data-dir itself", text)
			}
			return docUp, nil
		case sub == "apiserver" && env == envAPIServer:
			return docAPIServer, nil
		case sub == "dns" && len(args) == 3 && args[1] == "--conf":
			return docBackground, nil
		case sub == "up", sub == "apiserver", sub == "dns", sub == "nodecache", sub == "agent",
			sub == "operator", sub == "controllers", sub == "scheduler", sub == "etcd-member":
			return 0, fmt.Errorf("%q: a server this page's environment does not start; give the page an environment in docPages", text)
		}
		return docRun, nil
	}
	for _, p := range runnablePrefixes {
		if strings.HasPrefix(text, p) {
			return docRun, nil
		}
	}
	return 0, fmt.Errorf("%q: the docs test does not know this command; say in classifyDoc how to run it, and check what the text says it does", text)
}

// docResult is what one command did.
type docResult struct {
	stdout, stderr string
	combined       string // stdout and stderr as a terminal shows them (run's combined)
	exit           int
}

// readmeEnv is what README's checks know of the test's `up`.
type readmeEnv struct {
	outputs []string // README's untagged blocks not after a ```sh block, rewritten
}

// readmeCheck checks what README's text says a command does, beyond its
// exit status and the output block after it. Each matches exactly one
// README command.
type readmeCheck struct {
	command *regexp.Regexp
	check   func(t *testing.T, env *readmeEnv, r docResult)
}

var readmeChecks = []readmeCheck{
	{regexp.MustCompile(`resolvconf -f examples/custom-pod\.yaml -n ns1 `), func(t *testing.T, env *readmeEnv, r docResult) {
		t.Helper()
		if len(env.outputs) < 1 || r.stdout != env.outputs[0] {
			t.Errorf("printed:\n%s\nREADME's first output block says:\n%s", r.stdout, strings.Join(env.outputs[:min(1, len(env.outputs))], ""))
		}
	}},
	{regexp.MustCompile(`validate -f examples/$`), func(t *testing.T, env *readmeEnv, r docResult) {
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
	{regexp.MustCompile(`validate -f examples/underscore-search-pod\.yaml --feature-gates=RelaxedDNSSearchValidation=false$`), func(t *testing.T, env *readmeEnv, r docResult) {
		t.Helper()
		if want := `examples/underscore-search-pod.yaml:16:9: spec.dnsConfig.searches[0]: Invalid value: "abc_d.example.com": `; !strings.HasPrefix(r.stdout, want) {
			t.Errorf("printed %q, want the underscore entry rejected: %q…", r.stdout, want)
		}
	}},
}

// outputMatches reports whether got is what an output block shows: line by
// line, where "…" in a line of want stands for any text (ages, generated
// names, allocated IPs), and a line of want that is only "…" for any number
// of lines.
func outputMatches(want, got string) bool {
	w := strings.Split(strings.TrimSuffix(want, "\n"), "\n")
	g := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	var match func(w, g []string) bool
	match = func(w, g []string) bool {
		if len(w) == 0 {
			return len(g) == 0
		}
		if strings.TrimSpace(w[0]) == "…" {
			for k := 0; k <= len(g); k++ {
				if match(w[1:], g[k:]) {
					return true
				}
			}
			return false
		}
		return len(g) > 0 && lineMatches(w[0], g[0]) && match(w[1:], g[1:])
	}
	return match(w, g)
}

// lineMatches matches one line with "…" standing for any text.
func lineMatches(want, got string) bool {
	parts := strings.Split(want, "…")
	if len(parts) == 1 {
		return want == got
	}
	rest, ok := strings.CutPrefix(got, parts[0])
	if !ok {
		return false
	}
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(rest, p)
		if i < 0 {
			return false
		}
		rest = rest[i+len(p):]
	}
	return strings.HasSuffix(rest, parts[len(parts)-1])
}

// The addresses the docs name, which the test replaces with free ones of
// the same role (their third octet): up's defaults, node-2's and node-3's
// caches of `up --nodes 3`, and the nameserver docs/tour.md starts.
const (
	docClusterDNS = "127.0.10.10"
	docNodeCache  = "127.0.20.10" // node-N's is the (N-1)-th after it
	docUpstream   = "127.0.55.53"
)

// docAddrs are the test's replacements of the docs' addresses.
type docAddrs struct {
	clusterDNS string   // ADDR:53
	nodeCaches []string // ADDR:53, one per node
	upstream   string   // ADDR:53
}

// pickDocAddrs picks free port-53 addresses for a page's servers.
func pickDocAddrs(t *testing.T, nodes int) docAddrs {
	t.Helper()
	a := docAddrs{clusterDNS: loopback53(t, 13), upstream: loopback53(t, 33)}
	first := netip.MustParseAddrPort(consecutive53(t, 23, nodes)).Addr()
	for range nodes {
		a.nodeCaches = append(a.nodeCaches, netip.AddrPortFrom(first, 53).String())
		first = first.Next()
	}
	return a
}

// rewriter replaces the docs' data dir and addresses with the test's, in
// commands, output blocks and the examples.
func (a docAddrs) rewriter(dataDir string) func(string) string {
	pairs := []string{"~/.dnsplane", dataDir}
	if a.clusterDNS != "" {
		pairs = append(pairs, docClusterDNS, hostOf(a.clusterDNS), docUpstream, hostOf(a.upstream))
	}
	doc := netip.MustParseAddr(docNodeCache)
	for _, c := range a.nodeCaches {
		pairs = append(pairs, doc.String(), hostOf(c))
		doc = doc.Next()
	}
	return strings.NewReplacer(pairs...).Replace
}

// commandLine is a command as the test runs it: the binary it built for
// however the docs run dnsplane, and rewrite's replacements.
func commandLine(text string, rewrite func(string) string) string {
	if m := dnsplaneCmdRE.FindString(text); m != "" {
		text = dnsplaneBin + text[len(strings.TrimSuffix(m, " ")):]
	}
	return rewrite(text)
}

// upNodes is the --nodes of a page's first up command (1 without one).
func upNodes(cmds []docCommand) int {
	for _, c := range cmds {
		args := strings.Fields(c.text)
		if !dnsplaneCmdRE.MatchString(c.text) || !slices.Contains(args, "up") {
			continue
		}
		for i, a := range args {
			v, ok := strings.CutPrefix(a, "--nodes=")
			if a == "--nodes" && i+1 < len(args) {
				v, ok = args[i+1], true
			}
			if n, err := strconv.Atoi(v); ok && err == nil {
				return n
			}
		}
		return 1
	}
	return 1
}

// scratchDir is where a page's commands run: a copy of examples/ with the
// docs' addresses rewritten (the test's servers listen elsewhere) next to
// links to the repository's other top-level entries, so that commands
// writing files write them there.
func scratchDir(t *testing.T, root string, rewrite func(string) string) string {
	t.Helper()
	dir := t.TempDir()
	// Commands `dnsplane exec` runs here (./gai) run as the pod's user in
	// its sandbox (docs/exec.md), which must be able to enter the
	// directory, as a container runs its image's programs: t.TempDir and
	// its parent are 0700.
	for _, d := range []string{dir, filepath.Dir(dir)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == "examples" || e.Name() == ".git" {
			continue
		}
		if err := os.Symlink(filepath.Join(root, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	src := filepath.Join(root, "examples")
	err = filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, "examples", rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, []byte(rewrite(string(data))), 0o644)
	})
	if err != nil {
		t.Fatalf("copying examples/: %v", err)
	}
	return dir
}

// docRunner runs one page's commands in its environment.
type docRunner struct {
	page    string
	dir     string // where commands run
	dataDir string
	addrs   docAddrs
	rewrite func(string) string
	environ []string // HOME is a temp dir, KUBECONFIG unset
	up      *process // the running up or apiserver, nil before the first
	exports []string // the page's export lines so far
}

// docsEnviron is the commands' environment: a fresh HOME keeps kubectl's
// cache and anything else a command writes under ~ out of the machine's,
// and makes the data dir the default one, ~/.dnsplane, for the commands
// that name none.
func docsEnviron(home string) []string {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "KUBECONFIG=") || strings.HasPrefix(kv, "HOME=")
	})
	return append(env, "HOME="+home)
}

// startServer starts (or, for an up after the first, restarts: the reader
// stopped the first with Ctrl-C) the page's server with the page's flags and
// the test's, and waits until it serves.
func (r *docRunner) startServer(t *testing.T, kind docKind, text string) {
	t.Helper()
	if r.up != nil {
		if err := r.up.stop(); err != nil {
			t.Fatalf("%s: stopping the page's server before %q: %v\nstderr:\n%s", r.page, text, err, r.up.stderr.tail())
		}
	}
	docArgs := strings.Fields(commandLine(text, r.rewrite))[1:]
	var args []string
	var ready *regexp.Regexp
	switch kind {
	case docUp:
		args = append(docArgs, "--data-dir", r.dataDir, "--secure-port", "0",
			"--dns-listen", r.addrs.clusterDNS, "--nodecache-listen", r.addrs.nodeCaches[0],
			// Nothing outside the cluster is asked.
			"--upstream", "127.0.0.1:9")
		if !slices.ContainsFunc(docArgs, func(a string) bool { return strings.HasPrefix(a, "--upstream-resolv-conf") }) {
			// The host search list the docs' outputs show.
			args = append(args, "--upstream-resolv-conf", filepath.Join(r.dir, "examples", "host-resolv.conf"))
		}
		ready = upRE
	case docAPIServer:
		args = append(docArgs, "--secure-port", "0")
		ready = servingRE
	}
	r.up = r.startProcess(t, "dnsplane "+strings.Join(args, " "), dnsplaneBin, args...)
	if out, err := r.up.stdout.waitFor(serverStartTimeout, r.up.exited, ready.MatchString); err != nil {
		t.Fatalf("%s: %s: waiting for it to serve: %v\nstdout:\n%s\nstderr:\n%s", r.page, r.up.name, err, out, r.up.stderr.tail())
	}
}

// startProcess starts a child in the page's directory and environment; it
// is killed when the test ends.
func (r *docRunner) startProcess(t *testing.T, name, path string, args ...string) *process {
	t.Helper()
	p := &process{name: name, cmd: exec.Command(path, args...),
		stdout: newOutputBuffer(), stderr: newOutputBuffer(), exited: make(chan struct{})}
	p.cmd.Dir, p.cmd.Env = r.dir, r.environ
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	dieWithParent(p.cmd)
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("log of %s:\n%s", p.name, p.stderr.tail())
		}
	})
	return p
}

// startBackground starts a server the page leaves running (`dnsplane dns
// --conf F`) and waits until the nameserver the docs name answers.
func (r *docRunner) startBackground(t *testing.T, text string) {
	t.Helper()
	args := strings.Fields(commandLine(text, r.rewrite))
	p := r.startProcess(t, strings.Join(args, " "), args[0], args[1:]...)
	c := &dns.Client{Timeout: time.Second}
	q := new(dns.Msg)
	q.SetQuestion(".", dns.TypeSOA)
	eventually(t, serverStartTimeout, 50*time.Millisecond, func() (bool, string) {
		if !p.running() {
			t.Fatalf("%s exited: %v\nstderr:\n%s", p.name, p.err, p.stderr.tail())
		}
		_, _, err := c.Exchange(q, r.addrs.upstream)
		return err == nil, fmt.Sprintf("%s does not answer on %s: %v", p.name, r.addrs.upstream, err)
	})
}

// run runs the script lines with bash in the page's directory. With
// combined, standard output and error share one pipe, so that what the
// command wrote is in the order a terminal shows it (kubectl's warnings
// before the result), and stdout and stderr are left empty.
func (r *docRunner) run(t *testing.T, script []string, combined bool) docResult {
	t.Helper()
	cmd := exec.CommandContext(ctxFor(t, 2*time.Minute), "bash", "-e", "-o", "pipefail", "-c", strings.Join(script, "\n"))
	cmd.Dir, cmd.Env = r.dir, r.environ
	var out, errOut, both strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if combined {
		// The same writer for both: os/exec then makes one pipe.
		cmd.Stdout, cmd.Stderr = &both, &both
	}
	err := cmd.Run()
	res := docResult{stdout: out.String(), stderr: errOut.String(), combined: both.String()}
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		res.exit = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("bash -c %q: %v", script, err)
	}
	return res
}

// runPage runs a page's commands in order and checks each exit status, the
// output block after a block's last command, and the page's own checks.
func runPage(t *testing.T, root, path string, env docEnv, checks []readmeCheck) {
	t.Helper()
	doc, err := parseDoc(path, readFile(t, filepath.Join(root, path)))
	if err != nil {
		t.Fatal(err)
	}
	cmds, last := doc.commands()
	kinds := make([]docKind, len(cmds))
	for i, c := range cmds {
		if kinds[i], err = classifyDoc(env, c.text); err != nil {
			t.Errorf("%s:%d: %v", path, c.line, err)
		}
	}
	checkOf := map[int]readmeCheck{} // command index → check
	for _, ch := range checks {
		var matched []int
		for i, c := range cmds {
			if ch.command.MatchString(c.text) {
				matched = append(matched, i)
			}
		}
		if len(matched) != 1 {
			t.Errorf("check %q matches %d commands of %s, want 1", ch.command, len(matched), path)
			continue
		}
		checkOf[matched[0]] = ch
	}
	for _, b := range doc.blocks {
		if b.notRun != "" {
			t.Logf("%s:%d: not run: %s", path, b.line, b.notRun)
		}
	}
	if t.Failed() {
		return
	}
	if env != envOffline {
		requireRoot(t)
		requireKubectl(t)
	}
	for _, c := range cmds {
		for tool, pkg := range map[string]string{"dig": "dnsutils", "musl-gcc": "musl-tools"} {
			if !strings.HasPrefix(c.text, tool+" ") {
				continue
			}
			if _, err := exec.LookPath(tool); err != nil {
				t.Skipf("%s is not installed (apt-get install %s; .ci/run installs it)", tool, pkg)
			}
		}
	}

	home := t.TempDir()
	r := &docRunner{page: path, dataDir: filepath.Join(home, ".dnsplane"), environ: docsEnviron(home)}
	if env != envOffline {
		r.addrs = pickDocAddrs(t, upNodes(cmds))
	}
	r.rewrite = r.addrs.rewriter(r.dataDir)
	r.dir = scratchDir(t, root, r.rewrite)
	checkEnv := &readmeEnv{}
	for _, o := range doc.outputs {
		checkEnv.outputs = append(checkEnv.outputs, r.rewrite(o))
	}

	for i, c := range cmds {
		switch kinds[i] {
		case docSkipped:
			t.Logf("%s:%d: %s: not run (the test suite itself)", path, c.line, c.text)
			continue
		case docUp, docAPIServer:
			r.startServer(t, kinds[i], c.text)
			t.Logf("%s:%d: %s: started as %s", path, c.line, c.text, r.up.name)
			continue
		case docBackground:
			r.startBackground(t, c.text)
			t.Logf("%s:%d: %s: running", path, c.line, c.text)
			continue
		}
		if r.up == nil && env != envOffline {
			t.Fatalf("%s:%d: %s: the page runs it before it starts its server", path, c.line, c.text)
		}
		cmd := commandLine(c.text, r.rewrite)
		if strings.HasPrefix(c.text, "export ") {
			r.exports = append(r.exports, cmd)
		}
		hasOutput := last[i] >= 0 && doc.blocks[last[i]].hasOutput
		res := r.run(t, append(slices.Clone(r.exports), cmd), hasOutput)
		t.Logf("%s:%d: %s: exit %d", path, c.line, c.text, res.exit)
		if res.exit != c.exit {
			t.Errorf("%s:%d: %s\n(run as %s)\nexit %d, want %d\nstdout:\n%s\nstderr:\n%s%s", path, c.line, c.text, cmd, res.exit, c.exit, res.stdout, res.stderr, res.combined)
			continue
		}
		if b := last[i]; hasOutput {
			if want := r.rewrite(doc.blocks[b].output); !outputMatches(want, res.combined) {
				t.Errorf("%s:%d: %s printed:\n%s\nthe block after it says (addresses rewritten; … is any text):\n%s", path, c.line, c.text, res.combined, want)
			}
		}
		if ch, ok := checkOf[i]; ok {
			t.Run(fmt.Sprintf("%s:%d", path, c.line), func(t *testing.T) { ch.check(t, checkEnv, res) })
		}
	}
}

// TestDocsCommands runs every ```sh command of the pages in docPages in
// order, as a reader would in a second terminal, each page against its own
// environment (docs/development.md, "The docs run"), and checks each exit
// status and what the text says it prints.
func TestDocsCommands(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range docPages {
		t.Run(p.path, func(t *testing.T) {
			var checks []readmeCheck
			if p.path == "README.md" {
				checks = readmeChecks
			}
			runPage(t, root, p.path, p.env, checks)
		})
	}
}

// TestDocsBlocksAccountedFor requires every ```sh block of README.md and
// docs/*.md to be run by TestDocsCommands (its page is in docPages, every
// command known) or marked not run, and lists the marked ones. It needs no
// root, so it holds wherever the tests run.
func TestDocsBlocksAccountedFor(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append([]string{filepath.Join(root, "README.md")}, pages...)
	envOf := map[string]docEnv{}
	for _, p := range docPages {
		envOf[p.path] = p.env
	}
	notRun := 0
	for _, abs := range pages {
		path, _ := filepath.Rel(root, abs)
		doc, err := parseDoc(path, readFile(t, abs))
		if err != nil {
			t.Error(err)
			continue
		}
		env, run := envOf[path]
		delete(envOf, path)
		for _, b := range doc.blocks {
			switch {
			case b.notRun != "":
				notRun++
				t.Logf("%s:%d: not run: %s", path, b.line, b.notRun)
			case !run:
				t.Errorf("%s:%d: a ```sh block the docs test neither runs nor skips: give %s an environment in docPages (test/e2e/readme_test.go) or mark the block <!-- not run: REASON --> (docs/development.md, \"The docs run\")", path, b.line, path)
			default:
				for _, c := range b.commands {
					if _, err := classifyDoc(env, c.text); err != nil {
						t.Errorf("%s:%d: %v", path, c.line, err)
					}
				}
			}
		}
	}
	for path := range envOf {
		t.Errorf("docPages names %s, which is not a page", path)
	}
	t.Logf("%d ```sh blocks marked not run", notRun)
}

// TestParseDoc is the parser's contract: what it takes from a block, and
// the inputs it refuses rather than skip.
func TestParseDoc(t *testing.T) {
	t.Parallel()
	t.Run("commands and outputs", func(t *testing.T) {
		t.Parallel()
		src := "text\n```sh\n# a comment\nkubectl get ns   # all\n\ngo run ./cmd/dnsplane validate -f x \\\n  -q   # exits 1 on purpose\n```\n\n```\nline 1\nline 2\n```\nprose\n```\nalone\n```\n<!-- not run: needs a thing -->\n```sh\nrm -rf /\n```\n```yaml\na: b\n```\n"
		doc, err := parseDoc("p.md", src)
		if err != nil {
			t.Fatal(err)
		}
		want := []docBlock{
			{line: 2, commands: []docCommand{
				{line: 4, text: "kubectl get ns", comment: "all"},
				{line: 6, text: "go run ./cmd/dnsplane validate -f x -q", comment: "exits 1 on purpose", exit: 1},
			}, output: "line 1\nline 2\n", hasOutput: true},
			{line: 19, notRun: "needs a thing", commands: []docCommand{{line: 20, text: "rm -rf /"}}},
		}
		if !slices.EqualFunc(doc.blocks, want, func(a, b docBlock) bool {
			return a.line == b.line && a.notRun == b.notRun && slices.Equal(a.commands, b.commands) && a.output == b.output && a.hasOutput == b.hasOutput
		}) {
			t.Errorf("blocks %+v, want %+v", doc.blocks, want)
		}
		if want := []string{"alone\n"}; !slices.Equal(doc.outputs, want) {
			t.Errorf("outputs %q, want %q", doc.outputs, want)
		}
		cmds, last := doc.commands()
		if len(cmds) != 2 || !slices.Equal(last, []int{-1, 0}) {
			t.Errorf("commands %+v ending blocks %v, want the two of the first block, the second ending it", cmds, last)
		}
	})
	for name, src := range map[string]string{
		"unclosed":           "```sh\nkubectl get ns\n",
		"bash":               "```bash\nkubectl get ns\n```\n",
		"console":            "```console\n$ kubectl get ns\n```\n",
		"fence inside":       "```sh\nkubectl get ns\n```yaml\n```\n",
		"dangling backslash": "```sh\nkubectl get \\\n```\n",
		"mark before prose":  "<!-- not run: x y -->\ntext\n```sh\nkubectl get ns\n```\n",
		"mark before yaml":   "<!-- not run: x y -->\n```yaml\na: b\n```\n",
		"mark at the end":    "<!-- not run: x y -->\n",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if doc, err := parseDoc("p.md", src); err == nil {
				t.Errorf("parsed %+v, want an error", doc)
			}
		})
	}
}

// TestClassifyDoc says which commands run where.
func TestClassifyDoc(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env  docEnv
		text string
		want docKind
	}{
		{envUp, "go run ./cmd/dnsplane up", docUp},
		{envUp, "go run -v ./cmd/dnsplane up --nodes 3", docUp},
		{envUp, "bash .ci/run", docSkipped},
		{envUp, "kubectl get ns", docRun},
		{envUp, "go run ./cmd/dnsplane node stop node-2", docRun},
		{envUp, "go run ./cmd/dnsplane dns --conf examples/tour/upstream.Corefile", docBackground},
		{envUp, "dig @127.0.20.10 a.example", docRun},
		{envUp, "export KUBECONFIG=~/.dnsplane/x", docRun},
		{envAPIServer, "dnsplane apiserver --data-dir ~/.dnsplane", docAPIServer},
		{envOffline, "dnsplane resolvconf -f x.yaml", docRun},
		{envOffline, "cat examples/host-resolv.conf", docRun},
	} {
		if got, err := classifyDoc(tc.env, tc.text); err != nil || got != tc.want {
			t.Errorf("classifyDoc(%v, %q) = %v, %v; want %v", tc.env, tc.text, got, err, tc.want)
		}
	}
	for _, tc := range []struct {
		env  docEnv
		text string
	}{
		{envUp, "curl http://x"},
		{envUp, "go build ./..."},
		{envUp, "go run ./cmd/dnsplane up --data-dir x"},
		{envUp, "go run ./cmd/dnsplane up --dns-listen 127.0.0.1:53"},
		{envUp, "rm -rf ~/.dnsplane"},
		{envOffline, "go run ./cmd/dnsplane up"},
		{envUp, "dnsplane apiserver --data-dir ~/.dnsplane"},
		{envUp, "dnsplane nodecache --listen 127.0.0.1:53"},
	} {
		if _, err := classifyDoc(tc.env, tc.text); err == nil {
			t.Errorf("classifyDoc(%v, %q) accepted it, want an error", tc.env, tc.text)
		}
	}
}

// TestOutputMatches is the output blocks' "…".
func TestOutputMatches(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		want, got string
		ok        bool
	}{
		{"a\nb\n", "a\nb\n", true},
		{"a\nb\n", "a\nc\n", false},
		{"pod/x created\n", "pod/x created\n\n", false},
		{"NAME   AGE\nweb    …\n", "NAME   AGE\nweb    5s\n", true},
		{"10.96.…\n", "10.96.0.12\n", true},
		{"10.96.…\n", "10.97.0.12\n", false},
		{"a…c…e\n", "abcde\n", true},
		{"a…c…e\n", "abde\n", false},
		{"head\n…\ntail\n", "head\n1\n2\ntail\n", true},
		{"head\n…\ntail\n", "head\ntail\n", true},
		{"head\n…\ntail\n", "head\n1\n", false},
	} {
		if got := outputMatches(tc.want, tc.got); got != tc.ok {
			t.Errorf("outputMatches(%q, %q) = %v, want %v", tc.want, tc.got, got, tc.ok)
		}
	}
}
