package storage

import (
	"bytes"
	"context"
	"strconv"
	"testing"
)

// benchValue is about the size of a small Pod in JSON.
var benchValue = bytes.Repeat([]byte("x"), 1024)

func BenchmarkStoreCreate(b *testing.B) {
	s := New(sharedClient, "/bench/"+b.Name())
	ctx := context.Background()
	i := 0
	for b.Loop() {
		if _, err := s.Create(ctx, "pods/ns/p"+strconv.Itoa(i), benchValue); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func BenchmarkStoreGet(b *testing.B) {
	s := New(sharedClient, "/bench/"+b.Name())
	ctx := context.Background()
	if _, err := s.Create(ctx, "pods/ns/p", benchValue); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := s.Get(ctx, "pods/ns/p"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStoreUpdateCAS(b *testing.B) {
	s := New(sharedClient, "/bench/"+b.Name())
	ctx := context.Background()
	kv, err := s.Create(ctx, "pods/ns/p", benchValue)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if kv, err = s.Update(ctx, "pods/ns/p", benchValue, kv.ModRevision); err != nil {
			b.Fatal(err)
		}
	}
}
