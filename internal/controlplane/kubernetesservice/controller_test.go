package kubernetesservice

import (
	"net"
	"strings"
	"testing"
)

// TestNewRefusesAddresses: the advertise address must be one an endpoint
// may name, as kube-apiserver's lease reconciler checks at start.
func TestNewRefusesAddresses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		ip      string
		wantErr string
	}{
		{"192.0.2.1", ""},
		{"2001:db8::1", ""},
		{"127.0.0.1", "127.0.0.1: "},
		{"::1", "loopback"},
		{"169.254.1.1", "link-local"},
		{"224.0.0.1", "link-local multicast"},
	}
	for _, tt := range tests {
		_, err := New(Config{PublicIP: net.ParseIP(tt.ip), PublicServicePort: 6443})
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("New(%s): %v", tt.ip, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("New(%s): %v, want an error with %q", tt.ip, err, tt.wantErr)
		}
	}
}
