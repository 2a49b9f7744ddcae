package storage

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// ListOptions selects a page of a list.
type ListOptions struct {
	// Limit caps the number of items returned; <= 0 means no limit.
	Limit int64
	// Continue is the token from the previous page's ListResult.
	Continue string
	// Revision 0 reads the latest state; > 0 reads the state as of that revision
	// (ErrCompacted if etcd no longer has it, ErrFutureRevision if it does not have it yet).
	// With Continue it must be 0 or the revision the token was issued at.
	Revision int64
}

// ListResult is one page of a list.
type ListResult struct {
	Items []KV
	// Revision is the revision the page reflects; all pages of one list share it.
	Revision int64
	// Continue is "" on the last page.
	Continue string
	// RemainingItemCount is how many items follow this page (nil on the last page).
	RemainingItemCount *int64
}

// continueToken is what the opaque continue string encodes. Start is relative to the
// listed prefix, so a token can only ever address keys inside the range being listed.
type continueToken struct {
	RV    int64  `json:"rv"`
	Start string `json:"start"`
}

func encodeContinue(t continueToken) string {
	b, err := json.Marshal(t)
	if err != nil {
		// Marshalling an int64 and a string cannot fail.
		panic(fmt.Sprintf("encoding continue token: %v", err))
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeContinue(s string) (continueToken, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		// The token is opaque: its base64/JSON encoding is an implementation detail,
		// so only ErrBadContinue is in the chain for callers to match on.
		return continueToken{}, fmt.Errorf("%w: not base64: %v", ErrBadContinue, err) //nolint:errorlint // opaque token: callers match ErrBadContinue only, not encoding errors
	}
	var t continueToken
	if err := json.Unmarshal(b, &t); err != nil {
		return continueToken{}, fmt.Errorf("%w: %v", ErrBadContinue, err) //nolint:errorlint // opaque token: callers match ErrBadContinue only, not encoding errors
	}
	if t.RV <= 0 {
		return continueToken{}, fmt.Errorf("%w: revision %d is not positive", ErrBadContinue, t.RV)
	}
	if t.Start == "" {
		return continueToken{}, fmt.Errorf("%w: no start key", ErrBadContinue)
	}
	return t, nil
}

// List returns the keys under keyPrefix in key order. keyPrefix is a plain string
// prefix: pass "pods/ns1/" (with the slash), not "pods/ns1", or namespace "ns10" matches
// too. Every page of a paged list is read at the revision of the first page, so pages
// are one consistent snapshot however many writes happen in between.
func (s *Store) List(ctx context.Context, keyPrefix string, opts ListOptions) (ListResult, error) {
	full := s.prefix + keyPrefix
	start := full
	rev := opts.Revision
	if opts.Continue != "" {
		tok, err := decodeContinue(opts.Continue)
		if err != nil {
			return ListResult{}, fmt.Errorf("listing %s: %w", keyPrefix, err)
		}
		if rev != 0 && rev != tok.RV {
			return ListResult{}, fmt.Errorf("listing %s: %w: issued at revision %d, request asks for revision %d",
				keyPrefix, ErrBadContinue, tok.RV, rev)
		}
		start, rev = full+tok.Start, tok.RV
	}
	if rev < 0 {
		return ListResult{}, fmt.Errorf("listing %s: negative revision %d", keyPrefix, rev)
	}

	ops := []clientv3.OpOption{clientv3.WithRange(clientv3.GetPrefixRangeEnd(full))}
	if rev > 0 {
		ops = append(ops, clientv3.WithRev(rev))
	}
	if opts.Limit > 0 {
		ops = append(ops, clientv3.WithLimit(opts.Limit))
	}
	resp, err := s.client.Get(ctx, start, ops...)
	if err != nil {
		if opts.Continue != "" {
			return ListResult{}, fmt.Errorf("listing %s with a continue token from revision %d: %w", keyPrefix, rev, translate(err))
		}
		return ListResult{}, fmt.Errorf("listing %s at revision %d: %w", keyPrefix, rev, translate(err))
	}
	if rev == 0 {
		rev = resp.Header.Revision
	}

	res := ListResult{Items: make([]KV, 0, len(resp.Kvs)), Revision: rev}
	for _, kv := range resp.Kvs {
		res.Items = append(res.Items, KV{
			Key:            s.relKey(kv.Key),
			Value:          kv.Value,
			ModRevision:    kv.ModRevision,
			CreateRevision: kv.CreateRevision,
		})
	}
	if resp.More && len(resp.Kvs) > 0 {
		last := string(resp.Kvs[len(resp.Kvs)-1].Key)
		// The next page starts just after the last key: appending a zero byte gives the
		// smallest key greater than it.
		res.Continue = encodeContinue(continueToken{RV: rev, Start: last[len(full):] + "\x00"})
		remaining := resp.Count - int64(len(resp.Kvs))
		res.RemainingItemCount = &remaining
	}
	return res, nil
}
