package loopguard

import "github.com/miekg/dns"

// IDLen is the length of one server's ID in the option value.
const IDLen = 8

// ID is one loopguard instance's identity in the option.
type ID [IDLen]byte

// Marks is what a request's options with the marker code say: the IDs of
// the servers it has passed, in order.
type Marks struct {
	// IDs are the valid IDs, concatenated (IDLen bytes each), in option
	// order; nil when there are none.
	IDs []byte
	// Malformed counts options with the code whose value is not a whole
	// number of IDs (empty included); their content is ignored.
	Malformed int
}

// Hops is how many servers the request has passed.
func (m Marks) Hops() int { return len(m.IDs) / IDLen }

// Contains reports whether id is among the IDs.
func (m Marks) Contains(id ID) bool {
	for i := 0; i+IDLen <= len(m.IDs); i += IDLen {
		if [IDLen]byte(m.IDs[i:i+IDLen]) == id {
			return true
		}
	}
	return false
}

// ParseMarks reads every EDNS0 local option with code in opt (nil: none).
// The value of a valid option is a non-empty sequence of IDLen-byte IDs;
// several valid options add up. It copies nothing when there is a single
// valid option, so the result aliases the request.
func ParseMarks(opt *dns.OPT, code uint16) Marks {
	var m Marks
	if opt == nil {
		return m
	}
	n := 0
	for _, o := range opt.Option {
		l, ok := o.(*dns.EDNS0_LOCAL)
		if !ok || l.Code != code {
			continue
		}
		if len(l.Data) == 0 || len(l.Data)%IDLen != 0 {
			m.Malformed++
			continue
		}
		switch n++; n {
		case 1:
			m.IDs = l.Data
		case 2:
			m.IDs = append(append(make([]byte, 0, len(m.IDs)+len(l.Data)), m.IDs...), l.Data...)
		default:
			m.IDs = append(m.IDs, l.Data...)
		}
	}
	return m
}
