package searchpath

import (
	"fmt"

	"github.com/miekg/dns"
)

// SetOption replaces any EDNS0 local option with code in m by one carrying
// list, adding an OPT record if m has none. A client must not be able to
// choose the search list the cluster DNS expands with, so the node cache
// always strips what the client sent.
func SetOption(m *dns.Msg, code uint16, list []string) error {
	value, err := Encode(list)
	if err != nil {
		return err
	}
	opt := m.IsEdns0()
	if opt == nil {
		m.SetEdns0(dns.DefaultMsgSize, false)
		opt = m.IsEdns0()
	}
	StripOption(m, code)
	opt.Option = append(opt.Option, &dns.EDNS0_LOCAL{Code: code, Data: value})
	return nil
}

// StripOption removes every EDNS0 local option with code from m.
func StripOption(m *dns.Msg, code uint16) {
	opt := m.IsEdns0()
	if opt == nil {
		return
	}
	kept := opt.Option[:0]
	for _, o := range opt.Option {
		if l, ok := o.(*dns.EDNS0_LOCAL); ok && l.Code == code {
			continue
		}
		kept = append(kept, o)
	}
	opt.Option = kept
}

// GetOption returns the search list carried in m under code. found is false
// when there is no such option; an option that does not decode is an error
// (the caller ignores it and counts it).
func GetOption(m *dns.Msg, code uint16) (list []string, found bool, err error) {
	opt := m.IsEdns0()
	if opt == nil {
		return nil, false, nil
	}
	for _, o := range opt.Option {
		l, ok := o.(*dns.EDNS0_LOCAL)
		if !ok || l.Code != code {
			continue
		}
		if found {
			return nil, true, fmt.Errorf("more than one search list option (code %d)", code)
		}
		found = true
		if list, err = Decode(l.Data); err != nil {
			return nil, true, err
		}
	}
	return list, found, nil
}
