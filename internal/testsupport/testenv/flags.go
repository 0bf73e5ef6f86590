package testenv

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Flag is one command-line flag of a program as its usage text states it.
type Flag struct {
	Name    string // without the dash
	Env     string // the environment variable named at the end of its usage; "" = none
	Default string // as flag.PrintDefaults prints it, unquoted; "" = the zero value
}

var (
	usageEntry   = regexp.MustCompile(`(?m)^  -(\S+)(?: \S+)?\n((?:    \t.*(?:\n|$))+)`)
	usageDefault = regexp.MustCompile(`\s*\(default (.*)\)$`)
	usageEnv     = regexp.MustCompile(`\s*[(\[]([A-Z][A-Z0-9_]*)[)\]]$`)
)

// UsageFlags reads the flags of a flag.FlagSet's usage output
// (PrintDefaults), each usage ending in its environment variable, "(ENV)"
// or "[ENV]", when it has one.
func UsageFlags(tb testing.TB, usage string) map[string]Flag {
	tb.Helper()
	out := map[string]Flag{}
	for _, m := range usageEntry.FindAllStringSubmatch(usage, -1) {
		text := strings.TrimSpace(strings.ReplaceAll(m[2], "\n    \t", " "))
		f := Flag{Name: m[1]}
		if d := usageDefault.FindStringSubmatch(text); d != nil {
			f.Default = d[1]
			if u, err := strconv.Unquote(d[1]); err == nil {
				f.Default = u
			}
			text = text[:len(text)-len(d[0])]
		}
		if e := usageEnv.FindStringSubmatch(text); e != nil {
			f.Env = e[1]
		}
		out[f.Name] = f
	}
	if len(out) == 0 {
		tb.Fatalf("no flags in the usage text:\n%s", usage)
	}
	return out
}

// CheckFlagTables holds the documentation's flag tables to the program's
// flags (UsageFlags). A flag table is a markdown table whose header has a
// "Flag" and a "Default" column (and maybe an "Environment" one); a row
// names a flag by a backquoted `-name` in its Flag cell. In every file,
// each row must name a flag the program has, with its environment variable
// and its default (a default cell reads as its first backquoted value, or
// as the zero value when it starts with "empty", "none" or "unset"; 0,
// false and 0s are the zero value; durations compare as durations). In the
// file complete, every flag of the program must have a row.
func CheckFlagTables(t *testing.T, flags map[string]Flag, complete string, others ...string) {
	t.Helper()
	for _, path := range append([]string{complete}, others...) {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rows := flagRows(string(raw))
		if len(rows) == 0 {
			t.Errorf("%s has no flag table (a header with Flag and Default columns)", path)
		}
		seen := map[string]bool{}
		for _, r := range rows {
			seen[r.Name] = true
			f, ok := flags[r.Name]
			switch {
			case !ok:
				t.Errorf("%s:%d documents -%s, which the program does not have", path, r.line, r.Name)
			case r.hasEnv && r.Env != f.Env:
				t.Errorf("%s:%d: -%s's environment variable is %q, the documentation says %q", path, r.line, r.Name, f.Env, r.Env)
			case !sameDefault(r.Default, f.Default):
				t.Errorf("%s:%d: -%s's default is %q, the documentation says %q", path, r.line, r.Name, f.Default, r.Default)
			}
		}
		if path != complete {
			continue
		}
		for name := range flags {
			if !seen[name] && name != "h" && name != "help" {
				t.Errorf("%s has no row for -%s (%s)", path, name, flags[name].Env)
			}
		}
	}
}

type flagRow struct {
	Flag
	hasEnv bool
	line   int
}

var (
	backquoted = regexp.MustCompile("`([^`]*)`")
	flagName   = regexp.MustCompile("`-([a-z][a-z0-9-]*)`")
)

// flagRows returns the rows of the flag tables of a markdown text.
func flagRows(text string) []flagRow {
	var out []flagRow
	flagCol, envCol, defCol := -1, -1, -1
	for i, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "|") {
			flagCol, envCol, defCol = -1, -1, -1 // a table ends at a line that is not a row
			continue
		}
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		for j := range cells {
			cells[j] = strings.TrimSpace(cells[j])
		}
		if strings.HasPrefix(line, "|---") || strings.HasPrefix(line, "| ---") {
			continue
		}
		if flagCol < 0 && defCol < 0 && envCol < 0 {
			// A header: find its columns (a table without them is no flag table).
			f, e, d := -1, -1, -1
			for j, c := range cells {
				switch c {
				case "Flag":
					f = j
				case "Environment":
					e = j
				case "Default":
					d = j
				}
			}
			if f >= 0 && d >= 0 {
				flagCol, envCol, defCol = f, e, d
			} else {
				flagCol, envCol, defCol = -2, -2, -2 // rows of another table
			}
			continue
		}
		if flagCol < 0 || len(cells) <= max(flagCol, defCol, envCol) {
			continue
		}
		m := flagName.FindStringSubmatch(cells[flagCol])
		if m == nil {
			continue
		}
		r := flagRow{Flag: Flag{Name: m[1], Default: docDefault(cells[defCol])}, line: i + 1}
		if envCol >= 0 {
			r.hasEnv = true
			if e := backquoted.FindStringSubmatch(cells[envCol]); e != nil {
				r.Env = e[1]
			}
		}
		out = append(out, r)
	}
	return out
}

// docDefault reads a Default cell: its first backquoted value, "" for one
// that starts with empty, none or unset, else the cell as written.
func docDefault(cell string) string {
	if strings.HasPrefix(cell, "`") {
		return backquoted.FindStringSubmatch(cell)[1]
	}
	for _, zero := range []string{"empty", "none", "unset"} {
		if strings.HasPrefix(cell, zero) {
			return ""
		}
	}
	return cell
}

// sameDefault compares a documented default with the program's.
func sameDefault(doc, prog string) bool {
	zero := func(s string) bool { return s == "" || s == "0" || s == "false" || s == "0s" }
	if zero(doc) || zero(prog) {
		return zero(doc) && zero(prog)
	}
	if a, err := time.ParseDuration(doc); err == nil {
		b, err := time.ParseDuration(prog)
		return err == nil && a == b
	}
	return doc == prog
}
