package restclient_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/workspacenet/facade/restclient"
)

// TestGeneratedDecodersOnTheDemoData: every demo answer of the local REST
// service to the GETs of the table (every page of every list its filters
// name, every record by id) decodes to what encoding/json makes of it.
func TestGeneratedDecodersOnTheDemoData(t *testing.T) {
	_, base, m := demoService(t)
	get := func(path string) ([]byte, map[string]any) {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, base+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+m.BearerToken)
		req.Header.Set("service-network-id", m.NetworkID)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s %v", path, resp.StatusCode, body, err)
		}
		var v map[string]any
		if err := json.Unmarshal(body, &v); err != nil {
			t.Fatal(err)
		}
		return body, v
	}
	seen := map[string]int{}
	// pages reads path and its next pages, comparing each answer of op.
	pages := func(op restclient.Operation, path string) {
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		for next := ""; ; {
			p := path
			if next != "" {
				p += sep + "nextPageToken=" + url.QueryEscape(next)
			}
			body, v := get(p)
			restclient.SameAsEncodingJSON(t, op.Key, body)
			seen[op.Key]++
			tok, _ := v["nextPageToken"].(string)
			if tok == "" {
				return
			}
			next = tok
		}
	}
	for _, op := range restclient.Operations() {
		if op.Method != http.MethodGet {
			continue
		}
		if i := strings.IndexByte(op.Route, '{'); i >= 0 {
			// The collection before the version names the kind ("invoice" of
			// /billing/invoices/v1/{id}/items).
			segs := strings.Split(op.Route[:i], "/")
			kind := strings.TrimSuffix(segs[len(segs)-3], "s")
			for _, id := range m.IDs[kind] {
				pages(op, op.Route[:i]+id+op.Route[i+strings.IndexByte(op.Route[i:], '}')+1:])
			}
		} else {
			for _, filter := range op.CacheTags {
				for _, id := range m.IDs[strings.TrimSuffix(filter, "Ref")] {
					pages(op, op.Route+"?"+filter+"="+id)
				}
			}
		}
		if seen[op.Key] == 0 {
			t.Errorf("%s: no answer read on the demo data", op)
		}
	}
	t.Logf("answers compared: %v", seen)
}
