package podserver

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
)

// hijackWatcher hands remotecommand (SPDY and WebSocket alike take the
// connection with Hijack) a connection that calls gone when it is closed
// or a read from the client fails: the client hung up, the idle timeout
// closed it, or the server shut down.
type hijackWatcher struct {
	http.ResponseWriter
	gone func()
}

func (h *hijackWatcher) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	hj, ok := h.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("podserver: the connection cannot be hijacked")
	}
	conn, brw, err := hj.Hijack()
	if err != nil {
		return nil, nil, err
	}
	w := &watchedConn{Conn: conn, gone: h.gone}
	// The buffered reader reads the connection itself, not w: wrap it so
	// its reads are watched too, keeping what it has buffered.
	return w, bufio.NewReadWriter(bufio.NewReader(watchedReader{r: brw.Reader, w: w}), brw.Writer), nil
}

// Unwrap lets http.ResponseController reach the connection.
func (h *hijackWatcher) Unwrap() http.ResponseWriter { return h.ResponseWriter }

type watchedConn struct {
	net.Conn
	once sync.Once
	gone func()
}

func (c *watchedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if err != nil {
		c.hungUp()
	}
	return n, err
}

func (c *watchedConn) Close() error {
	c.hungUp()
	return c.Conn.Close()
}

func (c *watchedConn) hungUp() { c.once.Do(c.gone) }

type watchedReader struct {
	r io.Reader
	w *watchedConn
}

func (r watchedReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil {
		r.w.hungUp()
	}
	return n, err
}
