package restclient

//go:generate go run ./internal/jsongen -o decode_gen.go -lazy InvoiceItems,Invoice,Resource Transaction Product Order CreditNote InvoiceItems Resource Booking Event Comment Post Visit VisitRequest Redemption

import (
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"strconv"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// Generated decoders of the wire types
//
// The wire types of the hot routes (every type reachable from the roots
// named in decode_gen.go's go:generate line) are decoded by code generated
// by internal/jsongen: one function per struct (dec_<Type>) over the
// hand-written reader below. The contract is encoding/json's, exactly, for
// these types:
//   - keys match a field's json name exactly, else case-insensitively
//     (encoding/json's folding); unknown keys are skipped, their values
//     validated;
//   - a value of the wrong JSON type, malformed JSON, trailing data or more
//     than 10000 nested containers is an error;
//   - null leaves a non-pointer field as it is, sets a pointer or slice to
//     nil and a json.RawMessage to "null";
//   - a repeated key decodes into what the first one made (objects and
//     slice elements merge, as with encoding/json);
//   - strings are unescaped as encoding/json does (invalid UTF-8 and lone
//     surrogates become U+FFFD); *Timestamp fields get Timestamp.UnmarshalJSON
//     of the value's text, so its lenient parsing is unchanged.
//
// What differs is where values live: the document's bytes are read as a
// string in place, not copied, and every decoded string without escapes is a
// substring of it (so a decoded value keeps its whole body alive, and the
// bytes given to a decoder must never be written again: response bodies are
// read into a fresh buffer each, and the cache hands out what it stored,
// read only), and the targets of pointer fields and the elements of slices
// are carved from per-body slabs (one []T per type, sized from the route's
// previous body), not allocated one by one.

// maxNestingDepth is encoding/json's limit on nested objects and arrays.
const maxNestingDepth = 10000

// decoder reads one JSON document; the generated dec_* functions drive it.
// Errors panic with a *jsonError that run recovers.
type decoder struct {
	s     string // the document
	b     []byte // s's bytes, read only (8-byte loads)
	i     int    // read position
	depth int    // open objects and arrays
	hints *slabHints
	a     arena   // generated: one slab per pointer target type
	sc    scratch // generated: element buffers of slices being decoded
	ptrs  []unsafe.Pointer
	used  []slabKind // the slabs this document used
	// deferred: a lazy_* decoder left a value undecoded (validated only).
	deferred bool
}

// jsonError is a decoding failure at an offset of the document.
type jsonError struct {
	msg string
	off int
}

func (e *jsonError) Error() string { return "json: " + e.msg + " at offset " + strconv.Itoa(e.off) }

var decoderPool = sync.Pool{New: func() any { return new(decoder) }}

// run decodes data with f, which must read exactly one value; only
// whitespace may follow it. h sizes the slabs and learns from this body.
// Decoded strings alias data, which must not be modified afterwards.
func run(data []byte, h *slabHints, f func(d *decoder)) (err error) {
	d := decoderPool.Get().(*decoder)
	d.s = unsafe.String(unsafe.SliceData(data), len(data))
	d.b = unsafe.Slice(unsafe.StringData(d.s), len(d.s))
	d.i, d.depth, d.hints, d.deferred = 0, 0, h, false
	defer func() {
		learn := h
		if r := recover(); r != nil {
			je, ok := r.(*jsonError)
			if !ok {
				panic(r)
			}
			err, learn = je, nil
		} else if h.length.Load() != int64(len(d.s)) {
			h.length.Store(int64(len(d.s)))
		}
		d.a.release(d.used, learn) // records what the slabs needed, drops them
		d.used = d.used[:0]
		d.sc.truncate()
		clear(d.ptrs)
		d.ptrs = d.ptrs[:0]
		d.s, d.b, d.hints = "", nil, nil
		decoderPool.Put(d)
	}()
	if d.ws() != '{' {
		d.fail("response is not a JSON object")
	}
	f(d)
	if d.ws() != 0 || d.i != len(d.s) {
		d.fail("invalid character after top-level value")
	}
	return nil
}

//go:noinline
func (d *decoder) fail(msg string) { panic(&jsonError{msg: msg, off: d.i}) }

// syntax fails on the byte at the read position.
//
//go:noinline
func (d *decoder) syntax() {
	if d.i >= len(d.s) {
		d.fail("unexpected end of JSON input")
	}
	d.fail("invalid character " + strconv.QuoteRune(rune(d.s[d.i])))
}

// mismatch fails on a value of the wrong JSON type (after checking it is
// well formed, so a syntax error is reported as one).
//
//go:noinline
func (d *decoder) mismatch(want string) {
	start := d.i
	d.skip()
	d.i = start
	d.fail("cannot unmarshal " + kindOf(d.s[start]) + " into a " + want)
}

func kindOf(c byte) string {
	switch c {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "bool"
	case 'n':
		return "null"
	}
	return "number"
}

// ws skips whitespace and returns the next byte (0 at the end).
func (d *decoder) ws() byte {
	for d.i < len(d.s) {
		c := d.s[d.i]
		if c > ' ' || (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
			return c
		}
		d.i++
	}
	return 0
}

// lit consumes the literal w (its first byte already seen).
func (d *decoder) lit(w string) {
	if len(d.s)-d.i < len(w) || d.s[d.i:d.i+len(w)] != w {
		for j := 0; j < len(w) && d.i < len(d.s) && d.s[d.i] == w[j]; j++ {
			d.i++
		}
		d.syntax()
	}
	d.i += len(w)
}

// null consumes a null if one is next.
func (d *decoder) null() bool {
	if d.ws() == 'n' {
		d.lit("null")
		return true
	}
	return false
}

func (d *decoder) open() {
	d.i++
	if d.depth++; d.depth > maxNestingDepth {
		d.fail("exceeded max depth")
	}
}

// objStart reads the start of an object value: false for null (consumed)
// and for {} (consumed); true when a key follows. Other values fail.
func (d *decoder) objStart() bool {
	switch d.ws() {
	case '{':
		d.open()
		if d.ws() == '}' {
			d.i++
			d.depth--
			return false
		}
		return true
	case 'n':
		d.lit("null")
		return false
	}
	d.mismatch("struct")
	return false
}

// objNext reads what follows a member: true after a comma (a key follows),
// false at the end of the object (consumed).
func (d *decoder) objNext() bool {
	switch d.ws() {
	case ',':
		d.i++
		return true
	case '}':
		d.i++
		d.depth--
		return false
	}
	d.syntax()
	return false
}

// key reads a member's key and the colon after it.
func (d *decoder) key() string {
	if d.ws() != '"' {
		d.syntax()
	}
	k := d.str()
	if d.ws() != ':' {
		d.syntax()
	}
	d.i++
	return k
}

// arrStart reads the start of an array value (null is not handled here):
// false for [] (consumed), true when an element follows.
func (d *decoder) arrStart() bool {
	if d.ws() != '[' {
		d.mismatch("slice")
	}
	d.open()
	if d.ws() == ']' {
		d.i++
		d.depth--
		return false
	}
	return true
}

// arrNext is objNext for arrays.
func (d *decoder) arrNext() bool {
	switch d.ws() {
	case ',':
		d.i++
		return true
	case ']':
		d.i++
		d.depth--
		return false
	}
	d.syntax()
	return false
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// special has the high bit of its lowest byte set at the first byte of x
// that is '"', '\\', a control character or not ASCII (bytes above that
// one may be flagged spuriously).
func special(x uint64) uint64 {
	q := x ^ (lsb * '"')
	b := x ^ (lsb * '\\')
	return ((q - lsb) &^ q) | ((b - lsb) &^ b) | (x - lsb*0x20) | x&msb
}

// str reads a string value (at its opening quote) and returns it
// unescaped: a substring of the document unless it holds escapes or
// invalid UTF-8.
func (d *decoder) str() string {
	start := d.i + 1
	i := start
	for {
		i = d.plainRun(i)
		switch c := d.s[i]; {
		case c == '"':
			d.i = i + 1
			return d.s[start:i]
		case c == '\\':
			return d.unquote(start)
		case c < 0x20:
			d.i = i
			d.syntax()
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRuneInString(d.s[i:])
			if r == utf8.RuneError && n == 1 {
				return d.unquote(start)
			}
			i += n
		default:
			i++
		}
	}
}

// plainRun returns the index, from i on, of the first byte of a string
// that is not plain ASCII text (a quote, a backslash, a control character
// or a non-ASCII byte), eight bytes at a time; the document ending first is
// a syntax error.
func (d *decoder) plainRun(i int) int {
	for i+8 <= len(d.b) {
		if m := special(binary.LittleEndian.Uint64(d.b[i:])) & msb; m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
		i += 8
	}
	if i >= len(d.s) {
		d.i = i
		d.syntax()
	}
	return i
}

// unquote reads the string that starts at start (after its quote) the slow
// way, as encoding/json's scanner and unquote do: escapes are decoded,
// invalid UTF-8 and lone surrogates become U+FFFD.
func (d *decoder) unquote(start int) string {
	out := make([]byte, 0, 32)
	i := start
	for {
		if i >= len(d.s) {
			d.i = i
			d.syntax()
		}
		c := d.s[i]
		switch {
		case c == '"':
			d.i = i + 1
			return unsafe.String(unsafe.SliceData(out), len(out))
		case c < 0x20:
			d.i = i
			d.syntax()
		case c == '\\':
			i++
			if i >= len(d.s) {
				d.i = i
				d.syntax()
			}
			switch e := d.s[i]; e {
			case '"', '\\', '/':
				out = append(out, e)
				i++
			case 'b':
				out, i = append(out, '\b'), i+1
			case 'f':
				out, i = append(out, '\f'), i+1
			case 'n':
				out, i = append(out, '\n'), i+1
			case 'r':
				out, i = append(out, '\r'), i+1
			case 't':
				out, i = append(out, '\t'), i+1
			case 'u':
				r := d.hex4(i + 1)
				i += 5
				if utf16.IsSurrogate(r) {
					r2 := rune(-1)
					if i+1 < len(d.s) && d.s[i] == '\\' && d.s[i+1] == 'u' {
						r2 = d.hex4(i + 2)
					}
					if dec := utf16.DecodeRune(r, r2); dec != unicode.ReplacementChar {
						r = dec
						i += 6
					} else {
						r = unicode.ReplacementChar
					}
				}
				out = utf8.AppendRune(out, r)
			default:
				d.i = i
				d.syntax()
			}
		case c < utf8.RuneSelf:
			out = append(out, c)
			i++
		default:
			r, n := utf8.DecodeRuneInString(d.s[i:])
			i += n
			out = utf8.AppendRune(out, r) // RuneError for invalid bytes
		}
	}
}

// hex4 reads the four hex digits of a \u escape at i.
func (d *decoder) hex4(i int) rune {
	if i+4 > len(d.s) {
		d.i = len(d.s)
		d.syntax()
	}
	var r rune
	for j := i; j < i+4; j++ {
		c := d.s[j]
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			d.i = j
			d.syntax()
		}
		r = r*16 + rune(c)
	}
	return r
}

// skipString validates a string (at its opening quote) without decoding it.
func (d *decoder) skipString() {
	i := d.i + 1
	for {
		i = d.plainRun(i)
		switch c := d.s[i]; {
		case c == '"':
			d.i = i + 1
			return
		case c < 0x20:
			d.i = i
			d.syntax()
		case c == '\\':
			if i+1 >= len(d.s) {
				d.i = i + 1
				d.syntax()
			}
			switch d.s[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				d.hex4(i + 2)
				i += 6
			default:
				d.i = i + 1
				d.syntax()
			}
		default:
			i++
		}
	}
}

// number validates a number at the read position, consumes it and returns
// its text.
func (d *decoder) number() string {
	start, i := d.i, d.i
	if i < len(d.s) && d.s[i] == '-' {
		i++
	}
	if i < len(d.s) && d.s[i] == '0' {
		i++
	} else {
		i = d.digits(i)
	}
	if i < len(d.s) && d.s[i] == '.' {
		i = d.digits(i + 1)
	}
	if i < len(d.s) && (d.s[i] == 'e' || d.s[i] == 'E') {
		i++
		if i < len(d.s) && (d.s[i] == '+' || d.s[i] == '-') {
			i++
		}
		i = d.digits(i)
	}
	d.i = i
	return d.s[start:i]
}

// digits consumes one or more digits from i and returns where they end.
func (d *decoder) digits(i int) int {
	if i >= len(d.s) || d.s[i] < '0' || d.s[i] > '9' {
		d.i = i
		d.syntax()
	}
	for i++; i < len(d.s) && d.s[i] >= '0' && d.s[i] <= '9'; i++ {
	}
	return i
}

// pow10 are the powers of ten a float64 holds exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// float reads a number value as strconv.ParseFloat does (out of range is
// an error); null is the caller's business.
func (d *decoder) float() float64 {
	c := d.ws()
	if c != '-' && (c < '0' || c > '9') {
		d.mismatch("float64")
	}
	s := d.number()
	// Exact fast path: at most 15 significant digits and a power of ten
	// a float64 holds, so one correctly rounded multiply or divide.
	var m uint64
	neg, exp, nd, i := false, 0, 0, 0
	if s[0] == '-' {
		neg, i = true, 1
	}
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		m, nd = m*10+uint64(s[i]-'0'), nd+1
	}
	if i < len(s) && s[i] == '.' {
		for i++; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			m, nd, exp = m*10+uint64(s[i]-'0'), nd+1, exp-1
		}
	}
	if i == len(s) && nd <= 15 && exp >= -22 {
		f := float64(m)
		if exp < 0 {
			f /= pow10[-exp]
		}
		if neg {
			f = -f
		}
		return f
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		d.fail("cannot unmarshal number " + s + " into a float64")
	}
	return f
}

// skip validates and consumes any value.
func (d *decoder) skip() {
	switch c := d.ws(); c {
	case '"':
		d.skipString()
	case '{':
		d.open()
		if d.ws() == '}' {
			d.i++
			d.depth--
			return
		}
		for {
			d.key()
			d.skip()
			if !d.objNext() {
				return
			}
		}
	case '[':
		d.open()
		if d.ws() == ']' {
			d.i++
			d.depth--
			return
		}
		for {
			d.skip()
			if !d.arrNext() {
				return
			}
		}
	case 't':
		d.lit("true")
	case 'f':
		d.lit("false")
	case 'n':
		d.lit("null")
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			d.number()
			return
		}
		d.syntax()
	}
}

// raw validates and consumes any value and returns its text.
func (d *decoder) raw() []byte {
	d.ws()
	start := d.i
	d.skip()
	return d.b[start:d.i:d.i]
}

// ---- Field decoders, one per field type ----

// string_ decodes a string into *p (null: unchanged).
func (d *decoder) string_(p *string) {
	switch d.ws() {
	case '"':
		*p = d.str()
	case 'n':
		d.lit("null")
	default:
		d.mismatch("string")
	}
}

// pstring decodes a string into **pp (null: nil).
func (d *decoder) pstring(pp **string) {
	switch d.ws() {
	case '"':
		s := d.str()
		if *pp == nil {
			*pp = d.a.string_.one(d, slab_string_)
		}
		**pp = s
	case 'n':
		d.lit("null")
		*pp = nil
	default:
		d.mismatch("string")
	}
}

// pfloat64 decodes a number into **pp (null: nil).
func (d *decoder) pfloat64(pp **float64) {
	if d.null() {
		*pp = nil
		return
	}
	f := d.float()
	if *pp == nil {
		*pp = d.a.float64_.one(d, slab_float64_)
	}
	**pp = f
}

// pbool decodes true or false into **pp (null: nil).
func (d *decoder) pbool(pp **bool) {
	var v bool
	switch d.ws() {
	case 't':
		d.lit("true")
		v = true
	case 'f':
		d.lit("false")
	case 'n':
		d.lit("null")
		*pp = nil
		return
	default:
		d.mismatch("bool")
	}
	if *pp == nil {
		*pp = d.a.bool_.one(d, slab_bool_)
	}
	**pp = v
}

// ptimestamp decodes any value into **pp with Timestamp.UnmarshalJSON
// (null: nil).
func (d *decoder) ptimestamp(pp **Timestamp) {
	if d.null() {
		*pp = nil
		return
	}
	b := d.raw()
	if *pp == nil {
		*pp = d.a.Timestamp.one(d, slab_Timestamp)
	}
	_ = (*pp).UnmarshalJSON(b) // never fails
}

// rawMessage copies any value's text into *p (null too, as "null").
func (d *decoder) rawMessage(p *json.RawMessage) {
	*p = append((*p)[:0], d.raw()...)
}

// stringElem decodes a string element of a []string.
func stringElem(d *decoder, p *string) { d.string_(p) }

// ---- Slices ----

// decodeSlice decodes an array (or null: nil) into *p. A first occurrence
// of the key (nil *p) collects the elements in scratch and moves them into
// one run of the type's slab; a repeated key decodes into the elements the
// first one made, as encoding/json does.
func decodeSlice[T any](d *decoder, p *[]T, sc *[]T, s *slab[T], k slabKind, elem func(*decoder, *T)) {
	if d.null() {
		*p = nil
		return
	}
	if *p != nil {
		mergeSlice(d, p, elem)
		return
	}
	if !d.arrStart() {
		*p = []T{}
		return
	}
	base := len(*sc)
	var zero T
	for {
		*sc = append(*sc, zero)
		elem(d, &(*sc)[len(*sc)-1])
		if !d.arrNext() {
			break
		}
	}
	out := s.run(d, k, len(*sc)-base)
	copy(out, (*sc)[base:])
	clear((*sc)[base:]) // the pooled buffer keeps no pointers
	*sc = (*sc)[:base]
	*p = out
}

// mergeSlice is encoding/json's array decoding into an existing slice.
func mergeSlice[T any](d *decoder, p *[]T, elem func(*decoder, *T)) {
	s := *p
	i := 0
	if d.arrStart() {
		for {
			if i >= cap(s) {
				var zero T
				s = append(s[:i], zero)
			} else if i >= len(s) {
				s = s[:i+1]
			}
			elem(d, &s[i])
			i++
			if !d.arrNext() {
				break
			}
		}
	}
	if i < len(s) {
		s = s[:i]
	}
	if i == 0 {
		s = []T{}
	}
	*p = s
}

// decodePtrSlice decodes an array of objects (or null: nil) into *p, a
// []*T; a null element is a nil pointer.
func decodePtrSlice[T any](d *decoder, p *[]*T, alloc func(*decoder) *T, elem func(*decoder, *T)) {
	if d.null() {
		*p = nil
		return
	}
	if *p != nil {
		mergeSlice(d, p, func(d *decoder, pp **T) {
			if d.null() {
				*pp = nil
				return
			}
			if *pp == nil {
				*pp = alloc(d)
			}
			elem(d, *pp)
		})
		return
	}
	if !d.arrStart() {
		*p = []*T{}
		return
	}
	base := len(d.ptrs)
	for {
		var v *T
		if !d.null() {
			v = alloc(d)
			elem(d, v)
		}
		d.ptrs = append(d.ptrs, unsafe.Pointer(v))
		if !d.arrNext() {
			break
		}
	}
	out := make([]*T, len(d.ptrs)-base)
	copy(out, unsafe.Slice((**T)(unsafe.Pointer(unsafe.SliceData(d.ptrs[base:]))), len(out)))
	clear(d.ptrs[base:])
	d.ptrs = d.ptrs[:base]
	*p = out
}

// ---- Slabs ----

// slab hands out the values of one type, carved from chunks.
type slab[T any] struct {
	buf  []T
	used int32 // values handed out from this body
}

// slabKind indexes a slab type in slabHints (generated constants).
type slabKind int

// one returns a new zero *T.
func (s *slab[T]) one(d *decoder, k slabKind) *T {
	if len(s.buf) == cap(s.buf) {
		s.grow(d, k, 1)
	}
	s.buf = s.buf[:len(s.buf)+1]
	s.used++
	return &s.buf[len(s.buf)-1]
}

// run returns n new zero values, in a slice whose capacity is n.
func (s *slab[T]) run(d *decoder, k slabKind, n int) []T {
	if cap(s.buf)-len(s.buf) < n {
		s.grow(d, k, n)
	}
	l := len(s.buf)
	s.buf = s.buf[:l+n]
	s.used += int32(n)
	return s.buf[l : l+n : l+n]
}

// grow starts a new chunk of room for at least need values: the first one
// as large as this route's previous body needed (scaled by length), the
// next ones doubling.
func (s *slab[T]) grow(d *decoder, k slabKind, need int) {
	n := int(s.used)
	if n == 0 {
		d.used = append(d.used, k)
		n = d.hints.estimate(k, len(d.s))
	}
	s.buf = make([]T, 0, max(n, need, 4))
}

// slabHints remember, per decoding root, how many values of each slab
// type its last body needed and that body's length.
type slabHints struct {
	length atomic.Int64
	counts [numSlabKinds]atomic.Int32
}

// estimate is the count of kind k the last body needed, scaled to a body
// of length n, plus an eighth.
func (h *slabHints) estimate(k slabKind, n int) int {
	if h == nil {
		return 0
	}
	l := h.length.Load()
	c := int64(h.counts[k].Load())
	if l <= 0 || c <= 0 {
		return 0
	}
	e := c * int64(n) / l
	return int(e + e/8)
}

// note records that the body needed used values of kind k (a kind it did
// not use keeps its count for the next body that does).
func (h *slabHints) note(k slabKind, used int32) {
	if h != nil && used != 0 && h.counts[k].Load() != used {
		h.counts[k].Store(used)
	}
}

// ---- Roots: envelopes and whole documents ----

// fastParseOne is parseOne for a type with a generated decoder.
func fastParseOne[T any](key string, h *slabHints, alloc func(*decoder) *T, dec func(*decoder, *T)) parseFunc {
	return func(data []byte) (any, pageInfo, error) {
		v, _, err := parseOneDeferred(data, key, h, alloc, dec)
		if err != nil {
			return nil, pageInfo{}, err
		}
		return v, pageInfo{}, nil
	}
}

// parseOneDeferred decodes the object under key with dec (a lazy decoder
// reports in deferred whether it left values undecoded).
func parseOneDeferred[T any](data []byte, key string, h *slabHints, alloc func(*decoder) *T, dec func(*decoder, *T)) (*T, bool, error) {
	var (
		v        *T
		deferred bool
	)
	err := run(data, h, func(d *decoder) {
		names := [...]string{key}
		if !d.objStart() {
			return
		}
		for {
			k := d.key()
			if k == key || foldField(k, names[:]) != "" {
				if d.null() {
					v = nil
				} else {
					if v == nil {
						v = alloc(d)
					}
					dec(d, v)
				}
			} else {
				d.skip()
			}
			if !d.objNext() {
				deferred = d.deferred
				return
			}
		}
	})
	if err != nil {
		return nil, false, err
	}
	if v == nil {
		return nil, false, errNoObject(key)
	}
	return v, deferred, nil
}

// fastParseList is parseList for a type with a generated decoder.
func fastParseList[T any](key string, h *slabHints, alloc func(*decoder) *T, dec func(*decoder, *T)) parseFunc {
	return func(data []byte) (any, pageInfo, error) {
		var (
			v          []*T
			next, sqn  *string
			next0, sq0 string
		)
		err := run(data, h, func(d *decoder) {
			names := [...]string{key, "nextPageToken", "searchQueryNext"}
			if !d.objStart() {
				return
			}
			for {
				k := d.key()
				if k != key && k != names[1] && k != names[2] {
					k = foldField(k, names[:])
				}
				switch k {
				case key:
					decodePtrSlice(d, &v, alloc, dec)
				case names[1]:
					pageToken(d, &next, &next0)
				case names[2]:
					pageToken(d, &sqn, &sq0)
				default:
					d.skip()
				}
				if !d.objNext() {
					return
				}
			}
		})
		if err != nil {
			return nil, pageInfo{}, err
		}
		var p pageInfo
		if next != nil {
			p.next = *next
		}
		if sqn != nil {
			p.searchQueryNext = *sqn
		}
		return v, p, nil
	}
}

// pageToken decodes a string or null into *pp, pointing it at *room.
func pageToken(d *decoder, pp **string, room *string) {
	if d.null() {
		*pp = nil
		return
	}
	if d.ws() != '"' {
		d.mismatch("string")
	}
	*room = d.str()
	*pp = room
}

// fastDecodeWhole decodes a whole document into *v.
func fastDecodeWhole[T any](data []byte, h *slabHints, v *T, dec func(*decoder, *T)) error {
	return run(data, h, func(d *decoder) { dec(d, v) })
}

// fastDecodeLazy decodes a whole document into *v with a lazy decoder
// (lazy_<Type>): deferred reports whether it left values undecoded.
func fastDecodeLazy[T any](data []byte, h *slabHints, v *T, dec func(*decoder, *T)) (deferred bool, err error) {
	err = run(data, h, func(d *decoder) {
		dec(d, v)
		deferred = d.deferred
	})
	return deferred, err
}

// foldField returns the first of names equal to key under encoding/json's
// case folding, else "".
func foldField(key string, names []string) string {
	ascii := true
	for i := 0; i < len(key); i++ {
		if key[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	for _, n := range names {
		if ascii {
			if len(n) == len(key) && asciiEqualFold(n, key) {
				return n
			}
		} else if foldName(n) == foldName(key) {
			return n
		}
	}
	return ""
}

func asciiEqualFold(a, b string) bool {
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'a' <= x && x <= 'z' {
			x -= 'a' - 'A'
		}
		if 'a' <= y && y <= 'z' {
			y -= 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// foldName is encoding/json's: ASCII upper-cased, every other rune the
// smallest of its fold orbit.
func foldName(s string) string {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		if r < utf8.RuneSelf {
			if 'a' <= r && r <= 'z' {
				r -= 'a' - 'A'
			}
			out = append(out, byte(r))
			continue
		}
		for {
			r2 := unicode.SimpleFold(r)
			if r2 <= r {
				r = r2
				break
			}
			r = r2
		}
		out = utf8.AppendRune(out, r)
	}
	return string(out)
}
