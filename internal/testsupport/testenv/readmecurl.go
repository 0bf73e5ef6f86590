package testenv

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// ReadmeExample is one example the documentation asks its reader to run,
// in reading order: a GraphQL query (Query) or a curl command (Curl).
type ReadmeExample struct {
	File  string // the documentation file it is in (DocFiles)
	Line  int    // where it starts in File (1-based)
	Query *ReadmeQuery
	Curl  *Curl
}

// Where names the example for failure messages: file:line.
func (ex ReadmeExample) Where() string { return fmt.Sprintf("%s:%d", ex.File, ex.Line) }

// Curl is one curl command of the documentation as bash runs it: variables
// expanded, quotes removed.
type Curl struct {
	Method string
	URL    string
	Header http.Header
	Body   string // -d; "" = none
	Text   string // the command as written, for failure messages
}

var (
	shBlock    = regexp.MustCompile("(?s)```sh\n(.*?)```")
	anyBlock   = regexp.MustCompile("(?s)```([A-Za-z]*)\n(.*?)```")
	curlLine   = regexp.MustCompile(`(?m)^\s*curl\s`)
	assignment = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)=(.*)$`)
)

// DocExamples returns every example of the documentation (DocFiles), file
// by file in reading order and in document order within a file
// (ReadmeExamples).
func DocExamples(tb testing.TB, root string) []ReadmeExample {
	tb.Helper()
	var out []ReadmeExample
	for _, f := range DocFiles(tb, root) {
		out = append(out, ReadmeExamples(tb, f)...)
	}
	return out
}

// ReadmeExamples returns every example of the file at path in document
// order: its ```graphql blocks (with their variables) and the curl commands
// of its ```sh blocks. A ```sh block holding a curl command may hold only
// comments, variable assignments (X=..., X=(...)) and curl commands with the
// options -s, -u, -X, -H and -d: anything else fails tb, so no example
// escapes the tests that run them. Variables are local to their block.
func ReadmeExamples(tb testing.TB, path string) []ReadmeExample {
	tb.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	text := string(raw)
	lineAt := func(offset int) int { return 1 + strings.Count(text[:offset], "\n") }
	var out []ReadmeExample
	at := readmeBlock.FindAllStringIndex(text, -1)
	for i, q := range fileQueries(tb, path) {
		out = append(out, ReadmeExample{File: path, Line: lineAt(at[i][0]), Query: &q})
	}
	for _, m := range anyBlock.FindAllStringSubmatch(text, -1) {
		if m[1] != "sh" && curlLine.MatchString(m[2]) {
			tb.Fatalf("%s: a curl command in a ```%s block: write it in a ```sh block, where the documentation test runs it", path, m[1])
		}
	}
	for _, m := range shBlock.FindAllStringSubmatchIndex(text, -1) {
		block := text[m[2]:m[3]]
		if !curlLine.MatchString(block) {
			continue
		}
		curls, err := parseShell(block, lineAt(m[2]))
		if err != nil {
			tb.Fatalf("%s: %v", path, err)
		}
		for _, c := range curls {
			out = append(out, ReadmeExample{File: path, Line: c.line, Curl: c.Curl})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Line < out[j].Line })
	return out
}

type lineCurl struct {
	*Curl
	line int
}

// parseShell interprets block, whose first line is line first of its
// file, as bash would: joined continuation lines, assignments, curl.
func parseShell(block string, first int) ([]lineCurl, error) {
	vars := map[string][]string{}
	var out []lineCurl
	lines := strings.Split(block, "\n")
	for i := 0; i < len(lines); i++ {
		start, stmt := first+i, lines[i]
		for strings.HasSuffix(stmt, `\`) && i+1 < len(lines) {
			i++
			stmt = strings.TrimSuffix(stmt, `\`) + " " + strings.TrimSpace(lines[i])
		}
		stmt = strings.TrimSpace(stmt)
		fail := func(err error) ([]lineCurl, error) { return nil, fmt.Errorf("line %d: %w: %s", start, err, stmt) }
		if stmt == "" || stmt[0] == '#' {
			continue
		}
		if m := assignment.FindStringSubmatch(stmt); m != nil {
			if strings.HasPrefix(m[2], "(") {
				words, rest, err := shellWords(m[2][1:], vars, true)
				if err != nil {
					return fail(err)
				}
				if rest = strings.TrimSpace(rest); rest != "" && rest[0] != '#' {
					return fail(fmt.Errorf("text after the array: %q", rest))
				}
				vars[m[1]] = words
				continue
			}
			words, _, err := shellWords(m[2], vars, false)
			if err != nil || len(words) > 1 {
				return fail(fmt.Errorf("not one word (%v)", err))
			}
			vars[m[1]] = append(words, "")[:1]
			continue
		}
		words, _, err := shellWords(stmt, vars, false)
		if err != nil {
			return fail(err)
		}
		if words[0] != "curl" {
			return fail(errors.New("the documentation test runs only assignments and curl in a block with curl"))
		}
		c, err := parseCurl(words[1:])
		if err != nil {
			return fail(err)
		}
		c.Text = stmt
		out = append(out, lineCurl{c, start})
	}
	return out, nil
}

// shellWords splits s into words as bash does for the forms the
// documentation uses: '...', "..." with \" \\ \$ escapes and $X / ${X} inside, unquoted
// $X and ${X}, "${A[@]}" (one word per element), and # comments. An unset
// variable, or an unquoted one holding blanks (bash would split it), is an
// error. With array set it stops at an unquoted ')' and returns the rest.
func shellWords(s string, vars map[string][]string, array bool) (words []string, rest string, err error) {
	lx := &shellLexer{s: s, vars: vars}
	for lx.i < len(s) {
		c := s[lx.i]
		switch {
		case c == ' ' || c == '\t':
			lx.flush()
			lx.i++
		case c == '#' && !lx.in:
			return lx.words, "", nil
		case c == ')' && array:
			lx.flush()
			return lx.words, s[lx.i+1:], nil
		case c == '\'':
			err = lx.singleQuoted()
		case c == '"':
			err = lx.doubleQuoted()
		case c == '\\' && lx.i+1 < len(s):
			lx.cur.WriteByte(s[lx.i+1])
			lx.in, lx.i = true, lx.i+2
		case c == '$':
			err = lx.unquotedVar()
		default:
			lx.cur.WriteByte(c)
			lx.in, lx.i = true, lx.i+1
		}
		if err != nil {
			return nil, "", err
		}
	}
	lx.flush()
	if array {
		return nil, "", errors.New("unterminated (")
	}
	return lx.words, "", nil
}

// shellLexer is shellWords' state: s read up to i, the words so far and
// the word being read (in: one is, even if empty).
type shellLexer struct {
	s     string
	i     int
	vars  map[string][]string
	words []string
	cur   strings.Builder
	in    bool
}

// flush ends the word being read, if any.
func (lx *shellLexer) flush() {
	if lx.in {
		lx.words = append(lx.words, lx.cur.String())
	}
	lx.cur.Reset()
	lx.in = false
}

// singleQuoted reads '...' at i, taken as it is.
func (lx *shellLexer) singleQuoted() error {
	j := strings.IndexByte(lx.s[lx.i+1:], '\'')
	if j < 0 {
		return errors.New("unterminated '")
	}
	lx.cur.WriteString(lx.s[lx.i+1 : lx.i+1+j])
	lx.in, lx.i = true, lx.i+j+2
	return nil
}

// doubleQuoted reads "..." at i: "${A[@]}" alone at the start of a word is
// one word per element; otherwise \" \\ \$ \` escape, and $X and ${X}
// (one value each) are replaced.
func (lx *shellLexer) doubleQuoted() error {
	s := lx.s
	if strings.HasPrefix(s[lx.i:], `"${`) && !lx.in {
		v, n, all, err := lx.lookup(s[lx.i+1:])
		if err != nil {
			return err
		}
		if all && strings.HasPrefix(s[lx.i+1+n:], `"`) {
			lx.words = append(lx.words, v...)
			lx.i += n + 2
			return nil
		}
	}
	lx.in = true
	for lx.i++; ; {
		if lx.i >= len(s) {
			return errors.New(`unterminated "`)
		}
		c := s[lx.i]
		switch {
		case c == '"':
			lx.i++
			return nil
		case c == '\\' && lx.i+1 < len(s) && strings.IndexByte("\"\\$`", s[lx.i+1]) >= 0:
			lx.cur.WriteByte(s[lx.i+1])
			lx.i += 2
		case c == '$':
			v, n, all, err := lx.lookup(s[lx.i:])
			if err != nil {
				return err
			}
			if all || len(v) != 1 {
				return errors.New(`an array inside "..." with other text`)
			}
			lx.cur.WriteString(v[0])
			lx.i += n
		default:
			lx.cur.WriteByte(c)
			lx.i++
		}
	}
}

// unquotedVar reads $X or ${X} at i: one value without blanks, which bash
// would not split.
func (lx *shellLexer) unquotedVar() error {
	v, n, all, err := lx.lookup(lx.s[lx.i:])
	if err != nil {
		return err
	}
	if all || len(v) != 1 || strings.ContainsAny(v[0], " \t") {
		return fmt.Errorf("unquoted %s would be split by the shell", lx.s[lx.i:lx.i+n])
	}
	lx.cur.WriteString(v[0])
	lx.in, lx.i = true, lx.i+n
	return nil
}

// shellVar matches $X, ${X} and ${X[@]}.
var shellVar = regexp.MustCompile(`^\$(?:([A-Za-z_][A-Za-z0-9_]*)|\{([A-Za-z_][A-Za-z0-9_]*)(\[@\])?\})`)

// lookup reads the variable at the start of at: its value, the length of
// its form, and whether the form names every element (${A[@]}).
func (lx *shellLexer) lookup(at string) (val []string, n int, all bool, err error) {
	m := shellVar.FindStringSubmatch(at)
	if m == nil {
		return nil, 0, false, fmt.Errorf("unsupported $ form at %.20q", at)
	}
	name := m[1] + m[2]
	v, ok := lx.vars[name]
	if !ok {
		return nil, 0, false, fmt.Errorf("$%s is not set", name)
	}
	return v, len(m[0]), m[3] != "", nil
}

// parseCurl reads the curl options the documentation uses.
func parseCurl(args []string) (*Curl, error) {
	c := &Curl{Header: http.Header{}}
	for i := 0; i < len(args); i++ {
		a := args[i]
		val := func() (string, error) {
			if i+1 >= len(args) {
				return "", fmt.Errorf("%s without a value", a)
			}
			i++
			return args[i], nil
		}
		var v string
		var err error
		switch a {
		case "-s", "--silent":
			continue
		case "-u", "--user", "-X", "--request", "-H", "--header", "-d", "--data":
			if v, err = val(); err != nil {
				return nil, err
			}
		default:
			if strings.HasPrefix(a, "-") {
				return nil, fmt.Errorf("curl option %s is not understood by the documentation test (testenv)", a)
			}
			if c.URL != "" {
				return nil, fmt.Errorf("two URLs: %s and %s", c.URL, a)
			}
			c.URL = a
			continue
		}
		switch a {
		case "-u", "--user":
			c.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(v)))
		case "-X", "--request":
			c.Method = v
		case "-H", "--header":
			k, hv, ok := strings.Cut(v, ":")
			if !ok {
				return nil, fmt.Errorf("header %q has no ':'", v)
			}
			c.Header.Add(strings.TrimSpace(k), strings.TrimSpace(hv))
		case "-d", "--data":
			if c.Body != "" {
				return nil, errors.New("two -d")
			}
			c.Body = v
		}
	}
	if c.URL == "" {
		return nil, errors.New("no URL")
	}
	if c.Method == "" {
		c.Method = http.MethodGet
		if c.Body != "" {
			c.Method = http.MethodPost // as curl -d
		}
	}
	if c.Body != "" && c.Header.Get("Content-Type") == "" {
		c.Header.Set("Content-Type", "application/x-www-form-urlencoded") // as curl -d
	}
	if c.Header.Get("Accept") == "" {
		c.Header.Set("Accept", "*/*") // as curl
	}
	return c, nil
}

// Do sends c as curl would, with the URL's origin replaced by its entry in
// origins (the documentation's origin, such as http://127.0.0.1:8081, to a
// test server's base URL): an origin not in origins is an error, so an
// example never reaches the network. It returns the status and the body.
func (c *Curl) Do(ctx context.Context, hc *http.Client, origins map[string]string) (int, []byte, error) {
	u := ""
	for from, to := range origins {
		if rest, ok := strings.CutPrefix(c.URL, from); ok && (rest == "" || rest[0] == '/' || rest[0] == '?') {
			u = to + rest
		}
	}
	if u == "" {
		return 0, nil, fmt.Errorf("%s is not one of the local servers the documentation names", c.URL)
	}
	var body io.Reader
	if c.Body != "" {
		body = strings.NewReader(c.Body)
	}
	req, err := http.NewRequestWithContext(ctx, c.Method, u, body)
	if err != nil {
		return 0, nil, err
	}
	req.Header = c.Header.Clone()
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return resp.StatusCode, raw, err
}
