package strictdecode

// InputError is input that cannot be split into documents: bad syntax,
// binary data, a document over a limit. Pos says where, when known.
type InputError struct {
	Pos Position
	Err error
}

func (e *InputError) Error() string {
	if e.Pos.IsZero() {
		return e.Err.Error()
	}
	return e.Pos.String() + ": " + e.Err.Error()
}

func (e *InputError) Unwrap() error { return e.Err }
