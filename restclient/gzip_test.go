package restclient

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"strconv"
	"testing"
)

// gzipped compresses s.
func gzipped(t *testing.T, s string) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := io.WriteString(zw, s); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// The client's own transport asks for gzip (as net/http's Transport would)
// and reads gzip'ed answers, 2xx and errors, as the Transport would have
// handed them: decompressed, without Content-Encoding and Content-Length,
// Uncompressed. A client given with WithHTTPClient asks for nothing itself.
func TestGzipAnswers(t *testing.T) {
	u := newUpstream(t)
	var asked []string
	u.handle(OpGetResource.Pattern(), func(w http.ResponseWriter, r *http.Request) {
		asked = append(asked, r.Header.Get("Accept-Encoding"))
		status, body := http.StatusOK, `{"resource":{"id":"`+r.PathValue("id")+`","title":"Room"}}`
		if r.PathValue("id") == "missing" {
			status, body = http.StatusNotFound, `{"message":"no such resource","type":"not_found"}`
		}
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("Accept-Encoding") == "gzip" {
			z := gzipped(t, body)
			w.Header().Set("Content-Encoding", "gzip")
			w.Header().Set("Content-Length", strconv.Itoa(len(z)))
			w.WriteHeader(status)
			w.Write(z)
			return
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	})
	c := u.client()
	for range 3 { // the gzip readers are reused
		r, resp, err := c.Resources.GetResource(ctxT(t), "r1")
		if err != nil || r.ID != "r1" || *r.Title != "Room" {
			t.Fatalf("GetResource = %+v, %v", r, err)
		}
		if !resp.Uncompressed || resp.ContentLength != -1 || resp.Header.Get("Content-Encoding") != "" || resp.Header.Get("Content-Length") != "" {
			t.Errorf("answer not as the Transport hands a decompressed one: Uncompressed %v, ContentLength %d, header %v", resp.Uncompressed, resp.ContentLength, resp.Header)
		}
	}
	_, _, err := c.Resources.GetResource(ctxT(t), "missing")
	if e, ok := asErrorResponse(err); !ok || e.StatusCode != http.StatusNotFound || e.Message != "no such resource" {
		t.Errorf("gzip'ed 404: %v", err)
	}
	own := len(asked)
	if _, _, err := u.client(WithHTTPClient(&http.Client{Transport: &http.Transport{DisableCompression: true}})).Resources.GetResource(ctxT(t), "r2"); err != nil {
		t.Fatal(err)
	}
	for i, a := range asked {
		if want := "gzip"; i >= own {
			want = ""
			if a != want {
				t.Errorf("request %d (WithHTTPClient, compression off) asked Accept-Encoding %q", i, a)
			}
		} else if a != want {
			t.Errorf("request %d (own transport) asked Accept-Encoding %q, want %q", i, a, want)
		}
	}
}

// A body that says gzip but is not fails on its first read, as with the
// Transport: a transport error, the answer read.
func TestGzipBadBody(t *testing.T) {
	u := newUpstream(t)
	u.handle(OpGetResource.Pattern(), func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		io.WriteString(w, `{"resource":{"id":"r1"}}`)
	})
	_, _, err := u.client(WithRetry(RetryPolicy{MaxRetries: 0})).Resources.GetResource(ctxT(t), "r1")
	if !IsTransport(err) {
		t.Errorf("err = %v, want a transport error", err)
	}
}
