package cliexit

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
)

func TestStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		err        error
		wantCode   int
		wantStderr string
	}{
		{"nil", nil, OK, ""},
		{"usage", Usagef("--listen %s", "x"), Usage, "error: --listen x\n"},
		{"invalid", Invalidf("bad Corefile"), Invalid, "error: bad Corefile\n"},
		{"wrapped", fmt.Errorf("ctx: %w", Invalidf("inner")), Invalid, "error: inner\n"},
		{"already reported", &Error{Code: Invalid}, Invalid, ""},
		{"cobra's own", errors.New(`unknown flag: --bogus`), Usage, "error: unknown flag: --bogus\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var stderr bytes.Buffer
			if got := Status(tt.err, &stderr); got != tt.wantCode || stderr.String() != tt.wantStderr {
				t.Errorf("Status(%v) = %d, stderr %q; want %d, %q", tt.err, got, stderr.String(), tt.wantCode, tt.wantStderr)
			}
		})
	}
}

func TestNewLogger(t *testing.T) {
	t.Parallel()
	for _, level := range []string{"debug", "info", "warn", "error", "INFO"} {
		if _, err := NewLogger(&bytes.Buffer{}, level); err != nil {
			t.Errorf("NewLogger(%q): %v", level, err)
		}
	}
	if _, err := NewLogger(&bytes.Buffer{}, "loud"); err == nil || err.Error() != `--log-level "loud": want debug, info, warn or error` {
		t.Errorf("NewLogger(loud) = %v", err)
	}
}
