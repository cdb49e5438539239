package server

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A long response (the events stream) goes on past the server's
// ReadTimeout, which bounds only reading the request.
func TestLongResponseOutlivesReadTimeout(t *testing.T) {
	const ticks = 8
	hs := HTTPServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range ticks {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
			fmt.Fprintf(w, "data: %d\n\n", i)
			w.(http.Flusher).Flush()
		}
	}))
	hs.ReadTimeout = 200 * time.Millisecond
	if hs.WriteTimeout != 0 || hs.IdleTimeout == 0 || hs.ReadHeaderTimeout == 0 {
		t.Fatalf("timeouts: write %s, idle %s, header %s", hs.WriteTimeout, hs.IdleTimeout, hs.ReadHeaderTimeout)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = hs.Serve(ln) }()
	defer hs.Close()
	resp, err := http.Get("http://" + ln.Addr().String() + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got := 0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "data: ") {
			got++
		}
	}
	if got != ticks {
		t.Errorf("the stream ended after %d of %d events (%v): the read timeout cut it", got, ticks, sc.Err())
	}
}
