package restclient

import (
	"compress/gzip"
	"io"
	"net/http"
	"strings"
	"sync"
)

// Compressed answers
//
// The client's own transport (newHTTPClient) asks for gzip as net/http's
// Transport does by itself, but in the request's header, which saves the
// Transport a header of its own per request (three allocations); the
// client then decompresses what comes back gzip'ed exactly as the Transport
// would have (setHeader, ungzip). A client given with WithHTTPClient is
// left to its own transport's settings.

// acceptEncoding is the Accept-Encoding the Transport would have sent.
const acceptEncoding = "gzip"

// ungzip makes hr, the answer to a request that asked for gzip, read
// decompressed when it came gzip'ed, as net/http's Transport does for the
// requests it asks gzip for: the body decompresses as it is read, the
// Content-Encoding and Content-Length headers go, ContentLength is -1 and
// Uncompressed is true.
func ungzip(hr *http.Response, method string) {
	if method == http.MethodHead || hr.ContentLength == 0 || !strings.EqualFold(hr.Header.Get("Content-Encoding"), "gzip") {
		return
	}
	hr.Body = &gzipBody{body: hr.Body}
	hr.Header.Del("Content-Encoding")
	hr.Header.Del("Content-Length")
	hr.ContentLength = -1
	hr.Uncompressed = true
}

// gzipBody decompresses body, starting at the first Read (a bad gzip header
// is that Read's error, as with net/http's Transport). Not for concurrent
// use.
type gzipBody struct {
	body io.ReadCloser
	zr   *gzip.Reader
	zerr error // sticky: the gzip header did not read
}

var gzipReaders sync.Pool // of *gzip.Reader

// eofReader is an empty flate.Reader: resetting a gzip.Reader to it
// allocates nothing.
type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }
func (eofReader) ReadByte() (byte, error)  { return 0, io.EOF }

func (g *gzipBody) Read(p []byte) (int, error) {
	if g.zr == nil {
		if g.zerr != nil {
			return 0, g.zerr
		}
		zr, _ := gzipReaders.Get().(*gzip.Reader)
		if zr == nil {
			zr, g.zerr = gzip.NewReader(g.body)
		} else {
			g.zerr = zr.Reset(g.body)
		}
		if g.zerr != nil {
			return 0, g.zerr
		}
		g.zr = zr
	}
	return g.zr.Read(p)
}

// Close closes the body and keeps the gzip reader for another answer.
func (g *gzipBody) Close() error {
	if g.zr != nil {
		_ = g.zr.Reset(eofReader{}) // lets go of the body
		gzipReaders.Put(g.zr)
		g.zr, g.zerr = nil, io.ErrClosedPipe
	}
	return g.body.Close()
}
