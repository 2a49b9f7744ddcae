// Package cliexit is what every dnsplane binary's commands share at their
// edge: the exit statuses, the error that carries one out of a cobra
// command, how it is reported, and the --log-level logger. Both dnsplane
// and the data-plane binary dnsplane-dns use it, so their commands fail
// the same way (docs/cli.md).
package cliexit

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
)

// Exit statuses shared by every subcommand of every dnsplane binary.
const (
	OK      = 0
	Invalid = 1 // the input was read and is invalid
	Usage   = 2 // the command line or an input path is wrong
)

// Error carries an exit status out of a cobra command; an empty Msg means
// the command already reported the problem.
type Error struct {
	Code int
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

// Usagef is a usage error (exit 2) with a formatted message.
func Usagef(format string, a ...any) error {
	return &Error{Code: Usage, Msg: fmt.Sprintf(format, a...)}
}

// Invalidf is an invalid-input error (exit 1) with a formatted message.
func Invalidf(format string, a ...any) error {
	return &Error{Code: Invalid, Msg: fmt.Sprintf(format, a...)}
}

// Status reports err on stderr as "error: ..." and returns the process exit
// status for it: OK for nil, the Error's code, and Usage for anything else
// (what cobra itself rejects: an unknown flag, a missing argument).
func Status(err error, stderr io.Writer) int {
	if err == nil {
		return OK
	}
	var ex *Error
	if errors.As(err, &ex) {
		if ex.Msg != "" {
			fmt.Fprintln(stderr, "error:", ex.Msg)
		}
		return ex.Code
	}
	fmt.Fprintln(stderr, "error:", err)
	return Usage
}

// NewLogger is the text logger of a command's --log-level flag.
func NewLogger(w io.Writer, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l})), nil
}
