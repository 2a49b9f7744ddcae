package testkit

import (
	"os"
	"strconv"
	"strings"
)

// Self is how internal/portowner names the test process, which holds the
// addresses a test takes: "dnsplane.test, pid N" (the kernel's comm name,
// /proc/self/comm, and the pid).
func Self() string {
	comm, _ := os.ReadFile("/proc/self/comm")
	return strings.TrimSpace(string(comm)) + ", pid " + strconv.Itoa(os.Getpid())
}
