package restclient

import (
	"net/http"
	"testing"
)

func TestCreatePost(t *testing.T) {
	u := newUpstream(t)
	p := fixture(t, "post.json")
	u.serveJSON(OpCreatePost.Pattern(), wantRequest{
		method: "POST", path: OpCreatePost.Route,
		body: `{"post":{"locationRef":"loc-1","text":"Hello","media":[{"key":"media/p.png"}],"og":{"url":"https://example.com","title":"Example"}}}`,
	}, http.StatusCreated, `{"post":`+p+`}`)
	got, _, err := u.client().Feed.CreatePost(ctxT(t), &PostCreateRequest{
		LocationRef: new("loc-1"), Text: new("Hello"),
		Media: []MediaInput{{Key: new("media/p.png")}},
		Og:    &PostOG{URL: new("https://example.com"), Title: new("Example")},
	})
	if err != nil {
		t.Fatal(err)
	}
	assertComplete(t, got, nil)
	assertRoundTrip(t, got, p)
	assertJSONEqual(t, got.Og, []byte(`{"url":"https://example.com","title":"Example","image":"https://example.com/i.png"}`))
	if _, _, err := u.client().Feed.CreatePost(ctxT(t), nil); err == nil {
		t.Error("nil request accepted")
	}
}

func TestUpdatePost(t *testing.T) {
	u := newUpstream(t)
	p := fixture(t, "post.json")
	// A non-nil empty Media clears the media; nil Text and Og are absent.
	u.serveJSON(OpUpdatePost.Pattern(), wantRequest{
		method: "PUT", path: "/feed/posts/v1/p-1",
		body: `{"post":{"media":[]}}`,
	}, http.StatusOK, `{"post":`+p+`}`)
	c := u.client()
	got, _, err := c.Feed.UpdatePost(ctxT(t), "p-1", &PostUpdateRequest{Media: []MediaInput{}})
	if err != nil {
		t.Fatal(err)
	}
	assertRoundTrip(t, got, p)
	if _, _, err := c.Feed.UpdatePost(ctxT(t), "p-1", nil); err == nil {
		t.Error("nil request accepted")
	}
	if _, _, err := c.Feed.UpdatePost(ctxT(t), "", &PostUpdateRequest{}); err == nil {
		t.Error("empty id accepted")
	}
}

func TestListComments(t *testing.T) {
	u := newUpstream(t)
	cm := fixture(t, "comment.json")
	u.serveJSON(OpListComments.Pattern(), wantRequest{method: "GET", path: "/feed/posts/v1/p-1/comments"},
		http.StatusOK, `{"comments":[`+cm+`]}`)
	c := u.client()
	got, resp, err := c.Feed.ListComments(ctxT(t), "p-1")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || resp.NextPageToken != "" {
		t.Fatalf("%d comments, token %q", len(got), resp.NextPageToken)
	}
	assertComplete(t, got[0], nil)
	assertRoundTrip(t, got[0], cm)
	if _, _, err := c.Feed.ListComments(ctxT(t), ""); err == nil {
		t.Error("empty id accepted")
	}
}
