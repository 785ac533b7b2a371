package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"

	"github.com/go-harness/harness/tools/toolstest"
	"github.com/go-harness/harness/tools/web"
)

func ExampleFetch() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<html><head><title>Notes</title></head><body><h1>Notes</h1><p>Hello, <b>web</b>.</p></body></html>`)
	}))
	defer srv.Close()

	// A test server listens on loopback, which web_fetch refuses unless
	// allowed: here by address range (a host would rather allow it with
	// a permission rule, WebFetch(domain:127.0.0.1)).
	fetch, err := web.Fetch(web.FetchConfig{PrivateNets: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	if err != nil {
		panic(err)
	}
	env := toolstest.NewEnv()
	defer env.Close()
	res, err := env.Call(context.Background(), fetch, map[string]any{"url": srv.URL + "/notes"})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Text()[len("URL: "+srv.URL+"/notes\n"):])
	// Output:
	// Title: Notes
	// Type: HTML, converted to Markdown (the whole page)
	//
	// # Notes
	//
	// Hello, **web**.
}
