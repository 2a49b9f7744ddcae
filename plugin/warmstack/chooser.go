package warmstack

import (
	"sync"
	"sync/atomic"
	"time"
)

// Whether the hand-off pays depends on the chain and on the runtime around
// it, not on the plugin alone. It costs two goroutine switches and the
// worker's timer per query, about 1.5 µs. What it saves is the stack
// growth of each query's new goroutine, which depends on how deep the
// chain goes and on the size a new goroutine starts with (the average
// stack in use at the last collection: Go 1.19's adaptive stack start),
// and costs several µs in a binary this size (copystack looks up every
// frame in the function tables). Measured with dnsperf, one core
// (plugin/warmstack/README.md): the node cache's chain costs 17–18 µs of
// CPU per cached query without warmstack and 13–14 µs handing off. The
// time a query spends in ServeDNS does not tell the two ways apart (on a
// lean chain its median was lower handed off, while the process spent
// less CPU in place): the difference is partly in what happens around the
// chain, so the chooser measures the process's CPU time instead.
//
// Every samplePeriod queries, after sampleStart more (so that the first
// sample does not measure the start-up: the cache filling, the heap
// growing), the chooser runs sampleWindows windows of windowQueries
// queries, in place and handed off in the order of handOffWindow, reads
// the process's CPU time over the last windowQueries-settleQueries of each
// window, and serves the queries up to the next sample the way that used
// less CPU. The first settleQueries of a window are not measured: the
// stack a new goroutine starts with follows the queries of the last
// collection (one every 1,300 cached queries or so), so right after a
// switch the other way's stacks still count, and a window measured whole
// favoured handing off even on a lean chain. The order (ABBA BAAB) gives
// both ways the same share of a load that rises or falls during the
// sample. The sample is 1/16 of the queries, half of it the costlier way,
// so a wrong way costs at most 1/32 of the difference between the two.
const (
	windowQueries = 8192
	settleQueries = 4096
	sampleWindows = 8
	sampleStart   = 2 * windowQueries
	sampleQueries = windowQueries * sampleWindows
	samplePeriod  = sampleQueries * 16
)

// handOffWindow says which of the sample's windows hand off.
var handOffWindow = [sampleWindows]bool{false, true, true, false, true, false, false, true}

// chooser decides, for every warmstack of one Corefile, whether queries
// are handed to the workers: they share the process, so their windows
// must be the same.
type chooser struct {
	handOff atomic.Bool
	queries atomic.Uint64
	// blind is set once the CPU time could not be read: every query is
	// handed off from then on.
	blind atomic.Bool

	mu      sync.Mutex
	started time.Duration    // CPU time when the current window's measured part began
	spent   [2]time.Duration // CPU time of the sample's windows: [0] in place, [1] handed off
	// cpuTime is the process's CPU time; ok is false where it cannot be
	// read (the chooser then always hands off).
	cpuTime func() (d time.Duration, ok bool)
	// decided is called with each decision (tests, debug logging).
	decided func(handOff bool, inPlace, handedOff time.Duration)
}

func newChooser() *chooser {
	c := &chooser{cpuTime: processCPUTime}
	c.handOff.Store(true) // until the first sample decides
	return c
}

// next counts a query and says whether to hand it off.
func (c *chooser) next() bool {
	if c.blind.Load() {
		return true
	}
	n := c.queries.Add(1) - 1
	phase := int64(n%samplePeriod) - sampleStart
	if phase < 0 || phase > sampleQueries {
		return c.handOff.Load()
	}
	w, off := int(phase/windowQueries), phase%windowQueries
	if (off == 0 && w > 0 || off == settleQueries && w < sampleWindows) && !c.edge(w, off == settleQueries) {
		return true
	}
	if w == sampleWindows {
		return c.handOff.Load()
	}
	return handOffWindow[w]
}

// edge begins measuring window w of the sample, or ends window w-1 (w ==
// sampleWindows: the sample's end, when the chooser decides). It returns
// false when the CPU time cannot be read.
func (c *chooser) edge(w int, begin bool) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	now, ok := c.cpuTime()
	if !ok {
		c.handOff.Store(true)
		c.blind.Store(true)
		return false
	}
	if begin {
		c.started = now
		return true
	}
	i := 0
	if handOffWindow[w-1] {
		i = 1
	}
	c.spent[i] += now - c.started
	if w < sampleWindows {
		return true
	}
	handOff := c.spent[1] < c.spent[0]
	c.handOff.Store(handOff)
	if c.decided != nil {
		c.decided(handOff, c.spent[0], c.spent[1])
	}
	c.spent = [2]time.Duration{}
	return true
}
